import { listAllBlobs, type BlobStore, type ListBlobResultBlob } from "@/lib/blob";
import { getStore, type SqlExecutor } from "@/lib/store";
import { deleteBundleUpdates, listLiveReleases } from "@/lib/store/updates";
import { bundlePrefix } from "./paths";

/** Spec 8 defaults: keep the newest 5 commits, delete commits older than 30 days. */
export const DEFAULT_KEEP = 5;
export const DEFAULT_MAX_AGE_DAYS = 30;
const DELETE_BATCH = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface CleanupOptions {
  /** Commits to keep per project, newest first. @defaultValue 5 */
  keep?: number;
  /** Commits whose newest blob is older than this are deleted. @defaultValue 30 */
  maxAgeDays?: number;
  /** Report what would be deleted without deleting. */
  dryRun?: boolean;
  /** The reference time for the age limit. @defaultValue now */
  now?: Date;
  /** Where the releases are recorded. @defaultValue getStore() */
  db?: SqlExecutor;
  /** Called after each project with the running summary. */
  onProgress?: (done: number, total: number, summary: CleanupSummary) => void;
}

export interface CleanupSummary {
  projects: number;
  commitsKept: number;
  commitsDeleted: number;
  blobsDeleted: number;
  bytesDeleted: number;
}

export interface Commit {
  id: string;
  newest: number;
  blobs: ListBlobResultBlob[];
}

function groupByCommit(projectId: string, blobs: ListBlobResultBlob[]): Commit[] {
  const prefix = bundlePrefix(projectId);
  const commits = new Map<string, Commit>();
  for (const blob of blobs) {
    const id = blob.pathname.slice(prefix.length).split("/")[0];
    const commit = commits.get(id) ?? { id, newest: 0, blobs: [] };
    commit.blobs.push(blob);
    commit.newest = Math.max(commit.newest, blob.uploadedAt.getTime());
    commits.set(id, commit);
  }
  return [...commits.values()].sort((a, b) => b.newest - a.newest || a.id.localeCompare(b.id));
}

/**
 * Which commits of one project go: those beyond the newest `keep` and those older than the age
 * limit, but never the newest commit nor a commit the update URL serves (apps run them).
 */
export function selectCommitsToDelete(commits: Commit[], keep: number, cutoff: number, served: ReadonlySet<string>): Commit[] {
  return commits.filter((commit, index) => index > 0 && !served.has(commit.id) && (index >= keep || commit.newest < cutoff));
}

/** Cleans the bundles of the given projects; returns totals (and deletes nothing on dryRun). */
export async function cleanupBundles(
  blob: BlobStore,
  projectIds: string[],
  options: CleanupOptions = {},
): Promise<CleanupSummary> {
  const keep = options.keep ?? DEFAULT_KEEP;
  const cutoff = (options.now ?? new Date()).getTime() - (options.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS) * DAY_MS;
  const summary: CleanupSummary = { projects: 0, commitsKept: 0, commitsDeleted: 0, blobsDeleted: 0, bytesDeleted: 0 };
  const db = options.db ?? (await getStore());

  for (const projectId of projectIds) {
    const commits = groupByCommit(projectId, await listAllBlobs(blob, bundlePrefix(projectId)));
    // A staged rollout serves two commits: its own, and the full release of the devices left out.
    const served = new Set((await listLiveReleases(db, projectId)).flatMap((release) => [release.commitSha, release.stable?.commitSha].filter((sha) => sha != null)));
    const doomed = selectCommitsToDelete(commits, keep, cutoff, served);
    const doomedBlobs = doomed.flatMap((commit) => commit.blobs);
    if (!options.dryRun) {
      // The records go first: a bundle must never be listed (or released again) without its files.
      await deleteBundleUpdates(db, projectId, doomed.map((commit) => commit.id));
      for (let start = 0; start < doomedBlobs.length; start += DELETE_BATCH) {
        await blob.del(doomedBlobs.slice(start, start + DELETE_BATCH).map((entry) => entry.url));
      }
    }
    summary.projects += 1;
    summary.commitsKept += commits.length - doomed.length;
    summary.commitsDeleted += doomed.length;
    summary.blobsDeleted += doomedBlobs.length;
    summary.bytesDeleted += doomedBlobs.reduce((total, entry) => total + entry.size, 0);
    options.onProgress?.(summary.projects, projectIds.length, summary);
  }
  return summary;
}
