import type { Sql, SqlExecutor } from "@/lib/store";

/**
 * Repository of the `blobs` table: the metadata index of the fs driver. The `etag` of a row is
 * also the version id that names the blob's file, so every put writes a new file and a
 * replaced or deleted version can be unlinked without touching the current one.
 */
export interface BlobRow {
  pathname: string;
  size: number;
  contentType: string;
  contentDisposition: string;
  cacheControl: string;
  etag: string;
  uploadedAt: Date;
}

interface BlobRecord {
  pathname: string;
  size: number;
  content_type: string;
  content_disposition: string;
  cache_control: string;
  etag: string;
  uploaded_at: Date;
}

const toBlobRow = (record: BlobRecord): BlobRow => ({
  pathname: record.pathname,
  size: Number(record.size),
  contentType: record.content_type,
  contentDisposition: record.content_disposition,
  cacheControl: record.cache_control,
  etag: record.etag,
  uploadedAt: record.uploaded_at,
});

export type NewBlobRow = Omit<BlobRow, "uploadedAt">;

const INSERT = `insert into blobs (pathname, size, content_type, content_disposition, cache_control, etag, uploaded_at)
  values ($1, $2, $3, $4, $5, $6, now())`;

const insertParams = (row: NewBlobRow) => [
  row.pathname,
  row.size,
  row.contentType,
  row.contentDisposition,
  row.cacheControl,
  row.etag,
];

export async function getBlobRow(db: SqlExecutor, pathname: string): Promise<BlobRow | null> {
  const { rows } = await db.query<BlobRecord>("select * from blobs where pathname = $1", [pathname]);
  return rows[0] ? toBlobRow(rows[0]) : null;
}

/** Inserts the row unless the pathname exists; true when inserted. */
export async function insertBlobRowIfAbsent(db: SqlExecutor, row: NewBlobRow): Promise<boolean> {
  const { rowCount } = await db.query(`${INSERT} on conflict (pathname) do nothing`, insertParams(row));
  return rowCount === 1;
}

// Arbitrary namespace for per-pathname advisory locks of blob writers.
const BLOB_LOCK_NAMESPACE = 727_274_002;

/**
 * Inserts or replaces the row and returns the etag it replaced (null when there was none).
 * Writers of one pathname are serialised by an advisory lock, so concurrent overwrites each see
 * the version they replace and no file is left unreferenced.
 */
export async function replaceBlobRow(sql: Sql, row: NewBlobRow): Promise<string | null> {
  return sql.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1, hashtext($2))", [BLOB_LOCK_NAMESPACE, row.pathname]);
    const previous = await tx.query<{ etag: string }>("select etag from blobs where pathname = $1", [row.pathname]);
    await tx.query(
      `${INSERT} on conflict (pathname) do update set size = excluded.size, content_type = excluded.content_type,
         content_disposition = excluded.content_disposition, cache_control = excluded.cache_control,
         etag = excluded.etag, uploaded_at = excluded.uploaded_at`,
      insertParams(row),
    );
    return previous.rows[0]?.etag ?? null;
  });
}

/**
 * One page of rows ordered by pathname (byte order: the column is collate "C"): pathnames
 * starting with `prefix`, after `after`. Asks for `limit` rows; the caller passes limit + 1 to
 * learn whether more follow.
 */
export async function listBlobRows(
  db: SqlExecutor,
  options: { prefix?: string; after?: string; limit: number },
): Promise<BlobRow[]> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (options.prefix) {
    // A range, not LIKE, so the primary-key index serves it; pathnames never contain U+10FFFF.
    params.push(options.prefix, `${options.prefix}\u{10FFFF}`);
    conditions.push(`pathname >= $${params.length - 1} and pathname < $${params.length}`);
  }
  if (options.after !== undefined) {
    params.push(options.after);
    conditions.push(`pathname > $${params.length}`);
  }
  params.push(options.limit);
  const where = conditions.length ? `where ${conditions.join(" and ")}` : "";
  const { rows } = await db.query<BlobRecord>(
    `select * from blobs ${where} order by pathname limit $${params.length}`,
    params,
  );
  return rows.map(toBlobRow);
}

/** Deletes the rows of these pathnames; returns the etags of the versions removed. */
export async function deleteBlobRows(db: SqlExecutor, pathnames: string[]): Promise<string[]> {
  if (pathnames.length === 0) return [];
  const { rows } = await db.query<{ etag: string }>("delete from blobs where pathname = any($1::text[]) returning etag", [
    pathnames,
  ]);
  return rows.map((row) => row.etag);
}
