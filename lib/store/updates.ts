import { isUuid } from "./ids";
import type { SqlExecutor } from "./sql";

/** An uploaded bundle as Expo Updates serves it (one per project, platform and commit). */
export interface BundleUpdate {
  projectId: string;
  platform: string;
  commitSha: string;
  commitMessage: string;
  runtimeVersion: string;
  updateId: string;
  /** The manifest JSON text, served byte for byte. */
  manifest: string;
  /** Bytes of the bundle and its assets. */
  size: number;
  createdAt: Date;
}

/** What the update URL of a (platform, runtime version) serves: a bundle, the embedded update, or nothing yet. */
export type ServedUpdate =
  | { kind: "bundle"; bundle: BundleUpdate; releasedAt: Date }
  | { kind: "embedded"; releasedAt: Date }
  | { kind: "none" };

/** The live release of one (platform, runtime version) of a project. */
export interface LiveRelease {
  platform: string;
  runtimeVersion: string;
  /** Null: rolled back to the update embedded in the app binary. */
  commitSha: string | null;
  releasedAt: Date;
}

interface BundleUpdateRow {
  project_id: string;
  platform: string;
  commit_sha: string;
  commit_message: string;
  runtime_version: string;
  update_id: string;
  manifest: string;
  size: string | number;
  created_at: Date;
}

const toBundleUpdate = (row: BundleUpdateRow): BundleUpdate => ({
  projectId: row.project_id,
  platform: row.platform,
  commitSha: row.commit_sha,
  commitMessage: row.commit_message,
  runtimeVersion: row.runtime_version,
  updateId: row.update_id,
  manifest: row.manifest,
  size: Number(row.size),
  createdAt: row.created_at,
});

const BUNDLE_COLUMNS = "project_id, platform, commit_sha, commit_message, runtime_version, update_id, manifest, size, created_at";

/** Records an uploaded bundle; a rebuild of the same commit replaces its record. */
export async function upsertBundleUpdate(db: SqlExecutor, bundle: BundleUpdate): Promise<void> {
  await db.query(
    `insert into bundle_updates (${BUNDLE_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (project_id, platform, commit_sha) do update set
       commit_message = excluded.commit_message, runtime_version = excluded.runtime_version,
       update_id = excluded.update_id, manifest = excluded.manifest, size = excluded.size,
       created_at = excluded.created_at`,
    [
      bundle.projectId,
      bundle.platform,
      bundle.commitSha,
      bundle.commitMessage,
      bundle.runtimeVersion,
      bundle.updateId,
      bundle.manifest,
      bundle.size,
      bundle.createdAt,
    ],
  );
}

/** One recorded bundle, or null. */
export async function getBundleUpdate(db: SqlExecutor, projectId: string, platform: string, commitSha: string): Promise<BundleUpdate | null> {
  const { rows } = await db.query<BundleUpdateRow>(
    `select ${BUNDLE_COLUMNS} from bundle_updates where project_id = $1 and platform = $2 and commit_sha = $3`,
    [projectId, platform, commitSha],
  );
  return rows[0] ? toBundleUpdate(rows[0]) : null;
}

/** Every recorded bundle of a project, newest first. */
export async function listBundleUpdates(db: SqlExecutor, projectId: string): Promise<BundleUpdate[]> {
  const { rows } = await db.query<BundleUpdateRow>(
    `select ${BUNDLE_COLUMNS} from bundle_updates where project_id = $1 order by created_at desc, commit_sha`,
    [projectId],
  );
  return rows.map(toBundleUpdate);
}

/** Forgets the bundles of the given commits (cleanup deleted their blobs). */
export async function deleteBundleUpdates(db: SqlExecutor, projectId: string, commitShas: string[]): Promise<void> {
  if (commitShas.length === 0) return;
  await db.query("delete from bundle_updates where project_id = $1 and commit_sha = any($2::text[])", [projectId, commitShas]);
}

/** Makes a commit's bundle (or, with null, the embedded update) what a (platform, runtime version) serves. */
export async function insertRelease(
  db: SqlExecutor,
  release: { projectId: string; platform: string; runtimeVersion: string; commitSha: string | null },
): Promise<void> {
  await db.query("insert into update_releases (project_id, platform, runtime_version, commit_sha) values ($1, $2, $3, $4)", [
    release.projectId,
    release.platform,
    release.runtimeVersion,
    release.commitSha,
  ]);
}

interface LiveReleaseRow {
  platform: string;
  runtime_version: string;
  commit_sha: string | null;
  released_at: Date;
}

/** The live release of every (platform, runtime version) a project has released to. */
export async function listLiveReleases(db: SqlExecutor, projectId: string): Promise<LiveRelease[]> {
  const { rows } = await db.query<LiveReleaseRow>(
    `select distinct on (platform, runtime_version) platform, runtime_version, commit_sha, released_at
     from update_releases where project_id = $1
     order by platform, runtime_version, id desc`,
    [projectId],
  );
  return rows.map((row) => ({ platform: row.platform, runtimeVersion: row.runtime_version, commitSha: row.commit_sha, releasedAt: row.released_at }));
}

/**
 * What the update URL of a project serves for a (platform, runtime version), read in one query;
 * null when the project does not exist.
 */
export async function getServedUpdate(db: SqlExecutor, projectId: string, platform: string, runtimeVersion: string): Promise<ServedUpdate | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<Partial<BundleUpdateRow> & { released_at: Date | null; released_commit: string | null }>(
    `select r.released_at, r.commit_sha as released_commit, b.*
     from projects p
     left join lateral (select commit_sha, released_at from update_releases
                        where project_id = $1 and platform = $2 and runtime_version = $3 order by id desc limit 1) r on true
     left join bundle_updates b on b.project_id = $1 and b.platform = $2 and b.commit_sha = r.commit_sha
     where p.id = $4`,
    [projectId, platform, runtimeVersion, projectId],
  );
  const row = rows[0];
  if (!row) return null;
  if (!row.released_at) return { kind: "none" };
  if (row.released_commit === null) return { kind: "embedded", releasedAt: row.released_at };
  // Cleanup keeps served bundles, so a missing one was removed by hand: nothing to serve.
  if (!row.manifest) return { kind: "none" };
  return { kind: "bundle", bundle: toBundleUpdate(row as BundleUpdateRow), releasedAt: row.released_at };
}

/** A project's code signing key: the private key as stored (ciphertext) and its certificate. */
export interface StoredSigningKey {
  keyId: string;
  encryptedPrivateKey: string;
  certificate: string;
}

/** Stores a project's signing key unless it has one; answers the key the project ends up with. */
export async function insertSigningKey(db: SqlExecutor, projectId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
  await db.query(
    "insert into update_signing_keys (project_id, key_id, private_key, certificate) values ($1, $2, $3, $4) on conflict (project_id) do nothing",
    [projectId, key.keyId, key.encryptedPrivateKey, key.certificate],
  );
  return (await getSigningKey(db, projectId)) as StoredSigningKey;
}

export async function getSigningKey(db: SqlExecutor, projectId: string): Promise<StoredSigningKey | null> {
  const { rows } = await db.query<{ key_id: string; private_key: string; certificate: string }>(
    "select key_id, private_key, certificate from update_signing_keys where project_id = $1",
    [projectId],
  );
  const row = rows[0];
  return row ? { keyId: row.key_id, encryptedPrivateKey: row.private_key, certificate: row.certificate } : null;
}
