import { isUuid } from "./ids";
import type { SqlExecutor } from "./port";

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
  /** Why the bundle's last delivery check failed; null when it passed or never ran. */
  deliveryError?: string | null;
}

/** What one release serves: a bundle, the embedded update, or nothing (its bundle was removed by hand). */
export type ServedUpdate =
  | { kind: "bundle"; bundle: BundleUpdate; releasedAt: Date }
  | { kind: "embedded"; releasedAt: Date }
  | { kind: "none" };

/** Where a release goes: a channel's (platform, runtime version). */
export interface ReleaseStream {
  channel: string;
  platform: string;
  runtimeVersion: string;
}

/** A release as the history holds it. */
export interface ReleaseEntry {
  /** Null: rolled back to the update embedded in the app binary. */
  commitSha: string | null;
  /** 1–100: the share of devices (by `eas-client-id`) that get it. */
  rolloutPercent: number;
  releasedAt: Date;
}

/**
 * The live release of one stream of a project, and during a staged rollout (`rolloutPercent` under
 * 100) the full release the devices left out keep getting (null: nothing was fully released).
 */
export interface LiveRelease extends ReleaseStream, ReleaseEntry {
  stable: ReleaseEntry | null;
}

/** What a stream serves: its newest release and, during a staged rollout, the newest full release. */
export interface StreamServing {
  latest: { release: ReleaseEntry; served: ServedUpdate };
  stable: { release: ReleaseEntry; served: ServedUpdate } | null;
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
  delivery_error: string | null;
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
  deliveryError: row.delivery_error,
});

const BUNDLE_COLUMNS = "project_id, platform, commit_sha, commit_message, runtime_version, update_id, manifest, size, created_at, delivery_error";

/**
 * Records an uploaded bundle; a rebuild of the same commit replaces its record, unless
 * `keepExisting` (a failed rebuild must not replace the bundle a stream may serve).
 */
export async function upsertBundleUpdate(db: SqlExecutor, bundle: BundleUpdate, options: { keepExisting?: boolean } = {}): Promise<void> {
  const onConflict = options.keepExisting
    ? "do nothing"
    : `do update set
       commit_message = excluded.commit_message, runtime_version = excluded.runtime_version,
       update_id = excluded.update_id, manifest = excluded.manifest, size = excluded.size,
       created_at = excluded.created_at, delivery_error = excluded.delivery_error`;
  await db.query(
    `insert into bundle_updates (${BUNDLE_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (project_id, platform, commit_sha) ${onConflict}`,
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
      bundle.deliveryError ?? null,
    ],
  );
}

/** Records the outcome of a bundle's delivery check (null: it passed). */
export async function setDeliveryError(db: SqlExecutor, bundle: { projectId: string; platform: string; commitSha: string }, error: string | null): Promise<void> {
  await db.query("update bundle_updates set delivery_error = $4 where project_id = $1 and platform = $2 and commit_sha = $3", [
    bundle.projectId,
    bundle.platform,
    bundle.commitSha,
    error,
  ]);
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

/** Makes a commit's bundle (or, with null, the embedded update) what a stream serves, to a share of devices. */
export async function insertRelease(
  db: SqlExecutor,
  release: ReleaseStream & { projectId: string; commitSha: string | null; rolloutPercent?: number },
): Promise<void> {
  await db.query(
    "insert into update_releases (project_id, channel, platform, runtime_version, commit_sha, rollout_percent) values ($1, $2, $3, $4, $5, $6)",
    [release.projectId, release.channel, release.platform, release.runtimeVersion, release.commitSha, release.rolloutPercent ?? 100],
  );
}

interface ReleaseRow {
  id: string;
  channel: string;
  platform: string;
  runtime_version: string;
  commit_sha: string | null;
  rollout_percent: number;
  released_at: Date;
}

const toReleaseEntry = (row: Pick<ReleaseRow, "commit_sha" | "rollout_percent" | "released_at">): ReleaseEntry => ({
  commitSha: row.commit_sha,
  rolloutPercent: Number(row.rollout_percent),
  releasedAt: row.released_at,
});

// The newest release of each stream, and the newest full release of each stream under a staged rollout.
const STREAM_HEADS = `
  select distinct on (channel, platform, runtime_version) id, channel, platform, runtime_version, commit_sha, rollout_percent, released_at
  from update_releases where project_id = $1 order by channel, platform, runtime_version, id desc`;
const STREAM_STABLES = `
  select distinct on (channel, platform, runtime_version) id, channel, platform, runtime_version, commit_sha, rollout_percent, released_at
  from update_releases where project_id = $1 and rollout_percent = 100 order by channel, platform, runtime_version, id desc`;

/** The live release of every stream a project has released to, with the full release a staged rollout falls back on. */
export async function listLiveReleases(db: SqlExecutor, projectId: string): Promise<LiveRelease[]> {
  const [heads, stables] = await Promise.all([db.query<ReleaseRow>(STREAM_HEADS, [projectId]), db.query<ReleaseRow>(STREAM_STABLES, [projectId])]);
  const streamKey = (row: ReleaseRow) => `${row.channel}\0${row.platform}\0${row.runtime_version}`;
  const stableOf = new Map(stables.rows.map((row) => [streamKey(row), row]));
  return heads.rows.map((row) => {
    const stable = row.rollout_percent < 100 ? stableOf.get(streamKey(row)) : undefined;
    return {
      channel: row.channel,
      platform: row.platform,
      runtimeVersion: row.runtime_version,
      ...toReleaseEntry(row),
      stable: stable ? toReleaseEntry(stable) : null,
    };
  });
}

/**
 * What the update URL of a project serves for a stream, read in one query: its newest release and,
 * when that one is a staged rollout, the newest full release; null when the project does not
 * exist, `latest` null when the stream has no release.
 */
export async function getStreamServing(db: SqlExecutor, projectId: string, stream: ReleaseStream): Promise<StreamServing | { latest: null } | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<Partial<BundleUpdateRow> & { release_id: string | null; released_at: Date | null; released_commit: string | null; rollout_percent: number | null }>(
    `select r.id as release_id, r.released_at, r.commit_sha as released_commit, r.rollout_percent, b.*
     from projects p
     left join lateral (
       (select id, commit_sha, released_at, rollout_percent from update_releases
        where project_id = $1 and channel = $2 and platform = $3 and runtime_version = $4 order by id desc limit 1)
       union
       (select id, commit_sha, released_at, rollout_percent from update_releases
        where project_id = $1 and channel = $2 and platform = $3 and runtime_version = $4 and rollout_percent = 100 order by id desc limit 1)
     ) r on true
     left join bundle_updates b on b.project_id = $1 and b.platform = $3 and b.commit_sha = r.commit_sha
     where p.id = $5
     order by r.id desc`,
    [projectId, stream.channel, stream.platform, stream.runtimeVersion, projectId],
  );
  if (rows.length === 0) return null;
  if (!rows[0].released_at) return { latest: null };
  const entries = rows.map((row) => {
    const release = toReleaseEntry({ commit_sha: row.released_commit ?? null, rollout_percent: row.rollout_percent ?? 100, released_at: row.released_at! });
    let served: ServedUpdate;
    if (release.commitSha === null) served = { kind: "embedded", releasedAt: release.releasedAt };
    // Cleanup keeps served bundles, so a missing one was removed by hand: nothing to serve.
    else if (!row.manifest) served = { kind: "none" };
    else served = { kind: "bundle", bundle: toBundleUpdate(row as BundleUpdateRow), releasedAt: release.releasedAt };
    return { release, served };
  });
  const [latest] = entries;
  return { latest, stable: latest.release.rolloutPercent < 100 ? (entries[1] ?? null) : null };
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
