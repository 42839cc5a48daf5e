import type { SqlExecutor } from "./port";

/** The newest mirror of a project's app repository, its last failure and its last restore. */
export interface RepositoryMirrorRecord {
  projectId: string;
  blobPathname: string | null;
  headCommit: string | null;
  branch: string | null;
  /** The commit holding the working tree (`refs/mirror/wip`); null when it matched HEAD. */
  wipCommit: string | null;
  fingerprint: string | null;
  sizeBytes: number | null;
  mirroredAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  restoredAt: Date | null;
  restoredMirroredAt: Date | null;
  restoredHeadCommit: string | null;
  restoredWorkingTree: boolean | null;
}

interface MirrorRow {
  project_id: string;
  blob_pathname: string | null;
  head_commit: string | null;
  branch: string | null;
  wip_commit: string | null;
  fingerprint: string | null;
  size_bytes: string | number | null;
  mirrored_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  restored_at: Date | null;
  restored_mirrored_at: Date | null;
  restored_head_commit: string | null;
  restored_working_tree: boolean | null;
}

const toRecord = (row: MirrorRow): RepositoryMirrorRecord => ({
  projectId: row.project_id,
  blobPathname: row.blob_pathname,
  headCommit: row.head_commit,
  branch: row.branch,
  wipCommit: row.wip_commit,
  fingerprint: row.fingerprint,
  sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
  mirroredAt: row.mirrored_at,
  lastError: row.last_error,
  lastErrorAt: row.last_error_at,
  restoredAt: row.restored_at,
  restoredMirroredAt: row.restored_mirrored_at,
  restoredHeadCommit: row.restored_head_commit,
  restoredWorkingTree: row.restored_working_tree,
});

export async function getRepositoryMirror(db: SqlExecutor, projectId: string): Promise<RepositoryMirrorRecord | null> {
  const { rows } = await db.query<MirrorRow>("select * from repository_mirrors where project_id = $1", [projectId]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Records a stored mirror and clears the last failure; answers the pathname of the mirror it
 * replaced (to delete), null when there was none or it is the same.
 */
export async function recordRepositoryMirror(
  db: SqlExecutor,
  mirror: { projectId: string; blobPathname: string; headCommit: string; branch: string | null; wipCommit: string | null; fingerprint: string; sizeBytes: number },
): Promise<string | null> {
  const { rows } = await db.query<{ previous: string | null }>(
    `with previous as (select blob_pathname from repository_mirrors where project_id = $1)
     insert into repository_mirrors (project_id, blob_pathname, head_commit, branch, wip_commit, fingerprint, size_bytes, mirrored_at, last_error, last_error_at)
     values ($1, $2, $3, $4, $5, $6, $7, now(), null, null)
     on conflict (project_id) do update
       set blob_pathname = excluded.blob_pathname, head_commit = excluded.head_commit, branch = excluded.branch,
           wip_commit = excluded.wip_commit, fingerprint = excluded.fingerprint, size_bytes = excluded.size_bytes,
           mirrored_at = excluded.mirrored_at, last_error = null, last_error_at = null
     returning (select blob_pathname from previous) as previous`,
    [mirror.projectId, mirror.blobPathname, mirror.headCommit, mirror.branch, mirror.wipCommit, mirror.fingerprint, mirror.sizeBytes],
  );
  const previous = rows[0]?.previous ?? null;
  return previous === mirror.blobPathname ? null : previous;
}

/** Records that the last mirror attempt failed (the previous mirror, if any, stays the newest). */
export async function recordRepositoryMirrorFailure(db: SqlExecutor, projectId: string, message: string): Promise<void> {
  await db.query(
    `insert into repository_mirrors (project_id, last_error, last_error_at) values ($1, $2, now())
     on conflict (project_id) do update set last_error = excluded.last_error, last_error_at = excluded.last_error_at`,
    [projectId, message],
  );
}

/** Clears the last failure once an attempt found the newest mirror current. */
export async function clearRepositoryMirrorFailure(db: SqlExecutor, projectId: string): Promise<void> {
  await db.query("update repository_mirrors set last_error = null, last_error_at = null where project_id = $1 and last_error is not null", [projectId]);
}

/** Records what a rebuild of a lost sandbox restored from the mirror taken at `mirroredAt`. */
export async function recordRepositoryRestore(
  db: SqlExecutor,
  restore: { projectId: string; mirroredAt: Date; headCommit: string; workingTree: boolean },
): Promise<void> {
  await db.query(
    `update repository_mirrors set restored_at = now(), restored_mirrored_at = $2, restored_head_commit = $3, restored_working_tree = $4
     where project_id = $1`,
    [restore.projectId, restore.mirroredAt, restore.headCommit, restore.workingTree],
  );
}
