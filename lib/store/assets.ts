import { isUuid } from "./ids";
import type { SqlExecutor } from "./port";

/** One row of `project_assets`: an asset as the service recorded it, independent of any sandbox. */
export interface ProjectAssetRecord {
  filename: string;
  /** The versioned public URL handed out for this upload. */
  blobUrl: string;
  contentType: string;
  size: number;
}

interface ProjectAssetRow {
  filename: string;
  blob_url: string;
  content_type: string;
  size: number;
}

const toRecord = (row: ProjectAssetRow): ProjectAssetRecord => ({
  filename: row.filename,
  blobUrl: row.blob_url,
  contentType: row.content_type,
  size: row.size,
});

/** Every recorded asset of a project, ordered by filename. */
export async function listProjectAssets(db: SqlExecutor, projectId: string): Promise<ProjectAssetRecord[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<ProjectAssetRow>(
    "select filename, blob_url, content_type, size from project_assets where project_id = $1 order by filename",
    [projectId],
  );
  return rows.map(toRecord);
}

/** Records an asset, replacing the record of an earlier upload under the same name. */
export async function upsertProjectAsset(db: SqlExecutor, projectId: string, asset: ProjectAssetRecord): Promise<void> {
  await db.query(
    `insert into project_assets (project_id, filename, blob_url, content_type, size) values ($1, $2, $3, $4, $5)
     on conflict (project_id, filename) do update set
       blob_url = excluded.blob_url, content_type = excluded.content_type, size = excluded.size, updated_at = now()`,
    [projectId, asset.filename, asset.blobUrl, asset.contentType, asset.size],
  );
}

/** Forgets an asset; a missing record is not an error. */
export async function deleteProjectAsset(db: SqlExecutor, projectId: string, filename: string): Promise<void> {
  if (!isUuid(projectId)) return;
  await db.query("delete from project_assets where project_id = $1 and filename = $2", [projectId, filename]);
}

/** The record of one asset, or null. */
export async function getProjectAsset(db: SqlExecutor, projectId: string, filename: string): Promise<ProjectAssetRecord | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<ProjectAssetRow>(
    "select filename, blob_url, content_type, size from project_assets where project_id = $1 and filename = $2",
    [projectId, filename],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}
