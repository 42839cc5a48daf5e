import type { SqlExecutor } from "@/lib/store";

/** Repositories of the snapshot tables (supabase/migrations/20261202020000_emulator_snapshots.sql). */

export interface SnapshotExport {
  startTs: bigint;
  completeTs: bigint;
  includeStorage: boolean;
  blobPathname: string;
}

/** Records a completed export as the deployment's latest; the pathname of the export it replaced, if any. */
export async function upsertSnapshotExport(db: SqlExecutor, deploymentName: string, exported: SnapshotExport): Promise<string | null> {
  const { rows } = await db.query<{ previous: string | null }>(
    `with previous as (select blob_pathname from emulator_snapshot_exports where deployment_name = $1 for update)
     insert into emulator_snapshot_exports (deployment_name, start_ts, complete_ts, include_storage, blob_pathname) values ($1, $2, $3, $4, $5)
     on conflict (deployment_name) do update set start_ts = excluded.start_ts, complete_ts = excluded.complete_ts,
       include_storage = excluded.include_storage, blob_pathname = excluded.blob_pathname
     returning (select blob_pathname from previous) as previous`,
    [deploymentName, exported.startTs.toString(), exported.completeTs.toString(), exported.includeStorage, exported.blobPathname],
  );
  return rows[0]?.previous ?? null;
}

export async function findSnapshotExport(db: SqlExecutor, deploymentName: string): Promise<SnapshotExport | null> {
  const { rows } = await db.query<{ start_ts: string; complete_ts: string; include_storage: boolean; blob_pathname: string }>(
    "select start_ts::text, complete_ts::text, include_storage, blob_pathname from emulator_snapshot_exports where deployment_name = $1",
    [deploymentName],
  );
  const row = rows[0];
  return row ? { startTs: BigInt(row.start_ts), completeTs: BigInt(row.complete_ts), includeStorage: row.include_storage, blobPathname: row.blob_pathname } : null;
}

/** What `_snapshot_imports.format` holds. */
export type ImportFormat = { format: "zip" } | { format: "jsonl" | "json_array"; table: string };
export type ImportMode = "RequireEmpty" | "Append" | "Replace" | "ReplaceAll";

/** `_snapshot_imports.state`, with int64 fields as bigint. */
export type ImportState =
  | { state: "waiting_for_confirmation"; message_to_confirm: string; require_manual_confirmation: boolean }
  | { state: "in_progress"; progress_message: string; checkpoint_messages: string[] }
  | { state: "completed"; timestamp: bigint; num_rows_written: bigint }
  | { state: "failed"; error_message: string };

export interface SnapshotImport {
  id: number;
  format: ImportFormat;
  mode: ImportMode;
  state: ImportState;
  blobPathname: string | null;
  createdAt: Date;
}

interface ImportRow {
  id: string;
  format: ImportFormat;
  mode: ImportMode;
  state: Record<string, unknown>;
  blob_pathname: string | null;
  created_at: Date;
}

/** bigint fields are stored as decimal strings (jsonb has no int64). */
const INT64_STATE_FIELDS = ["timestamp", "num_rows_written"] as const;

const storedState = (state: ImportState) =>
  JSON.stringify(Object.fromEntries(Object.entries(state).map(([key, value]) => [key, typeof value === "bigint" ? value.toString() : value])));

const toImport = (row: ImportRow): SnapshotImport => {
  const state = { ...row.state };
  for (const field of INT64_STATE_FIELDS) if (typeof state[field] === "string") state[field] = BigInt(state[field]);
  return { id: Number(row.id), format: row.format, mode: row.mode, state: state as ImportState, blobPathname: row.blob_pathname, createdAt: new Date(row.created_at) };
};

const IMPORT_COLUMNS = "id::text, format, mode, state, blob_pathname, created_at";

export async function insertSnapshotImport(
  db: SqlExecutor,
  deploymentName: string,
  input: { format: ImportFormat; mode: ImportMode; state: ImportState; blobPathname: string | null },
): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    "insert into emulator_snapshot_imports (deployment_name, format, mode, state, blob_pathname) values ($1, $2, $3, $4, $5) returning id::text",
    [deploymentName, JSON.stringify(input.format), input.mode, storedState(input.state), input.blobPathname],
  );
  return Number(rows[0].id);
}

export async function findSnapshotImport(db: SqlExecutor, deploymentName: string, id: number): Promise<SnapshotImport | null> {
  const { rows } = await db.query<ImportRow>(`select ${IMPORT_COLUMNS} from emulator_snapshot_imports where deployment_name = $1 and id = $2`, [deploymentName, id]);
  return rows[0] ? toImport(rows[0]) : null;
}

/** The deployment's latest imports, newest first (`_system/cli/queryImport:list` takes 20). */
export async function listSnapshotImports(db: SqlExecutor, deploymentName: string, limit: number): Promise<SnapshotImport[]> {
  const { rows } = await db.query<ImportRow>(`select ${IMPORT_COLUMNS} from emulator_snapshot_imports where deployment_name = $1 order by id desc limit $2`, [deploymentName, limit]);
  return rows.map(toImport);
}

/**
 * Moves an import from the state `from` to `to` (and forgets its upload once it finished); false
 * when it is no longer in `from` (another confirmation won).
 */
export async function updateSnapshotImportState(db: SqlExecutor, id: number, from: ImportState["state"], to: ImportState): Promise<boolean> {
  const finished = to.state === "completed" || to.state === "failed";
  const { rowCount } = await db.query(
    `update emulator_snapshot_imports set state = $3, blob_pathname = case when $4 then null else blob_pathname end
     where id = $1 and state->>'state' = $2`,
    [id, from, storedState(to), finished],
  );
  return rowCount > 0;
}
