import { NotFoundError } from "@/lib/errors";
import type { Sql } from "@/lib/store";
import {
  type BundleUpdate,
  getBundleUpdate,
  insertRelease,
  listBundleUpdates,
  listLiveReleases,
  type LiveRelease,
  upsertBundleUpdate,
} from "@/lib/store/updates";

/** Static bundles are exported for iOS only (lib/bundles). */
export const BUNDLE_PLATFORM = "ios";

/**
 * Records an uploaded bundle and makes it what its (platform, runtime version) serves, in one
 * transaction: publishing happens at bundle build (spec 4.4).
 */
export async function publishBundle(db: Sql, bundle: BundleUpdate): Promise<void> {
  await db.transaction(async (tx) => {
    await upsertBundleUpdate(tx, bundle);
    await insertRelease(tx, { projectId: bundle.projectId, platform: bundle.platform, runtimeVersion: bundle.runtimeVersion, commitSha: bundle.commitSha });
  });
}

/** What a project's update URL should serve: a commit's bundle, or the embedded update of a runtime version. */
export type ReleaseTarget = { commitSha: string } | { embedded: true; runtimeVersion: string };

/** Promotes a bundle, rolls back to an earlier one, or rolls back to the embedded update. */
export function release(db: Sql, projectId: string, target: ReleaseTarget): Promise<LiveRelease> {
  return "commitSha" in target ? releaseCommit(db, projectId, target.commitSha) : rollBackToEmbedded(db, projectId, target.runtimeVersion);
}

/** Serves an uploaded commit again (promote, or roll back to an earlier bundle). */
async function releaseCommit(db: Sql, projectId: string, commitSha: string): Promise<LiveRelease> {
  const bundle = await getBundleUpdate(db, projectId, BUNDLE_PLATFORM, commitSha);
  if (!bundle) throw new NotFoundError(`The project has no bundle of commit ${commitSha}.`, "bundle_not_found");
  await insertRelease(db, { projectId, platform: bundle.platform, runtimeVersion: bundle.runtimeVersion, commitSha });
  return liveReleaseOf(db, projectId, bundle.runtimeVersion);
}

/** Tells apps of a runtime version to run the update embedded in their binary (`rollBackToEmbedded`). */
async function rollBackToEmbedded(db: Sql, projectId: string, runtimeVersion: string): Promise<LiveRelease> {
  const live = (await listLiveReleases(db, projectId)).find((release) => release.platform === BUNDLE_PLATFORM && release.runtimeVersion === runtimeVersion);
  if (!live) throw new NotFoundError(`The project has released nothing for runtime version ${runtimeVersion}.`, "release_not_found");
  await insertRelease(db, { projectId, platform: BUNDLE_PLATFORM, runtimeVersion, commitSha: null });
  return liveReleaseOf(db, projectId, runtimeVersion);
}

async function liveReleaseOf(db: Sql, projectId: string, runtimeVersion: string): Promise<LiveRelease> {
  const releases = await listLiveReleases(db, projectId);
  return releases.find((release) => release.platform === BUNDLE_PLATFORM && release.runtimeVersion === runtimeVersion) as LiveRelease;
}

/** A bundle as the API and dashboard show it. */
export interface BundleSummary {
  commitSha: string;
  commitMessage: string;
  platform: string;
  runtimeVersion: string;
  updateId: string;
  size: number;
  createdAt: string;
  /** Whether the update URL serves this bundle now. */
  live: boolean;
}

/** A live release as the API and dashboard show it. */
export type ReleaseSummary = Omit<LiveRelease, "releasedAt"> & { releasedAt: string };

/** A project's bundles, newest first, and what each (platform, runtime version) serves. */
export async function listProjectBundles(db: Sql, projectId: string): Promise<{ bundles: BundleSummary[]; releases: ReleaseSummary[] }> {
  const [bundles, releases] = await Promise.all([listBundleUpdates(db, projectId), listLiveReleases(db, projectId)]);
  const live = new Set(releases.map((release) => `${release.platform}/${release.runtimeVersion}/${release.commitSha}`));
  return {
    bundles: bundles.map((bundle) => ({
      commitSha: bundle.commitSha,
      commitMessage: bundle.commitMessage,
      platform: bundle.platform,
      runtimeVersion: bundle.runtimeVersion,
      updateId: bundle.updateId,
      size: bundle.size,
      createdAt: bundle.createdAt.toISOString(),
      live: live.has(`${bundle.platform}/${bundle.runtimeVersion}/${bundle.commitSha}`),
    })),
    releases: releases.map((entry) => ({ ...entry, releasedAt: entry.releasedAt.toISOString() })),
  };
}
