import { AppError, NotFoundError } from "@/lib/errors";
import type { Sql, SqlExecutor } from "@/lib/store";
import {
  type BundleUpdate,
  getBundleUpdate,
  getSigningKey,
  insertRelease,
  listBundleUpdates,
  listLiveReleases,
  type LiveRelease,
  type ReleaseEntry,
  setDeliveryError,
  upsertBundleUpdate,
} from "@/lib/store/updates";
import { checkDelivery, type ClientFetch, clientFetch } from "./delivery";
import { loadSigningKey } from "./signing";
import { DEFAULT_CHANNEL, PLATFORMS, type Platform } from "./streams";

/** A release failed its delivery check: what a phone would fetch is broken, so it did not go live. */
export class DeliveryCheckError extends AppError {
  constructor(message: string) {
    super(502, "delivery_check_failed", message);
  }
}

/** Where a publish or promote goes, and to what share of devices. */
export interface ReleaseOptions {
  /** @defaultValue DEFAULT_CHANNEL */
  channel?: string;
  /** @defaultValue 100 */
  rolloutPercent?: number;
  /** How the delivery check fetches, as a phone. @defaultValue clientFetch() */
  fetchAsClient?: ClientFetch;
}

/** Runs the delivery check of each bundle: why each failed, or null. */
async function checkBundles(db: SqlExecutor, bundles: BundleUpdate[], fetchAsClient: ClientFetch = clientFetch()): Promise<(string | null)[]> {
  if (bundles.length === 0) return [];
  const { projectId } = bundles[0];
  const [key, stored] = await Promise.all([loadSigningKey(db, projectId), getSigningKey(db, projectId)]);
  const signing = key && stored ? { key, certificate: stored.certificate } : null;
  return Promise.all(
    bundles.map((bundle) => checkDelivery({ platform: bundle.platform, runtimeVersion: bundle.runtimeVersion, manifest: bundle.manifest, signing }, fetchAsClient)),
  );
}

function throwIfFailed(bundles: BundleUpdate[], failures: (string | null)[]): void {
  const failed = failures.flatMap((failure, index) => (failure ? [`${bundles[index].platform}: ${failure}`] : []));
  if (failed.length > 0) throw new DeliveryCheckError(`The delivery check failed, so the release did not go live. ${failed.join(" ")}`);
}

/**
 * Checks the uploaded bundles of a commit (one per platform) as a phone would fetch them, then
 * records them and releases them to the channel in one transaction: publishing happens at bundle
 * build (spec 4.4). A failed check releases none of them (the streams keep what they served) and
 * records why on each bundle, unless the commit already has a bundle, which stays as it was.
 */
export async function publishBundles(db: Sql, bundles: BundleUpdate[], options: ReleaseOptions = {}): Promise<void> {
  const failures = await checkBundles(db, bundles, options.fetchAsClient);
  if (failures.some((failure) => failure !== null)) {
    for (const [index, bundle] of bundles.entries()) await upsertBundleUpdate(db, { ...bundle, deliveryError: failures[index] }, { keepExisting: true });
    throwIfFailed(bundles, failures);
  }
  await db.transaction(async (tx) => {
    for (const bundle of bundles) {
      await upsertBundleUpdate(tx, { ...bundle, deliveryError: null });
      await insertRelease(tx, {
        projectId: bundle.projectId,
        channel: options.channel ?? DEFAULT_CHANNEL,
        platform: bundle.platform,
        runtimeVersion: bundle.runtimeVersion,
        commitSha: bundle.commitSha,
        rolloutPercent: options.rolloutPercent,
      });
    }
  });
}

/** What a project's update URL should serve on a channel: a commit's bundle, or the embedded update of a runtime version. */
export type ReleaseTarget = ({ commitSha: string; rolloutPercent?: number } | { embedded: true; runtimeVersion: string }) & {
  channel?: string;
  /** Only this platform. @defaultValue every platform the commit has a bundle for (or, for `embedded`, every live one) */
  platform?: Platform;
};

/**
 * Promotes a bundle to a channel (a share of devices with `rolloutPercent`; the same commit again
 * with a higher share raises a staged rollout), rolls back to an earlier one, or rolls back to the
 * embedded update. Answers the live releases it made, one per platform.
 */
export function release(db: Sql, projectId: string, target: ReleaseTarget, options: Pick<ReleaseOptions, "fetchAsClient"> = {}): Promise<LiveRelease[]> {
  const channel = target.channel ?? DEFAULT_CHANNEL;
  const platforms = target.platform ? [target.platform] : [...PLATFORMS];
  return "commitSha" in target
    ? releaseCommit(db, projectId, { channel, platforms, commitSha: target.commitSha, rolloutPercent: target.rolloutPercent }, options.fetchAsClient)
    : rollBackToEmbedded(db, projectId, { channel, platforms, runtimeVersion: target.runtimeVersion });
}

/** Serves an uploaded commit again (promote, or roll back to an earlier bundle), after its delivery check. */
async function releaseCommit(
  db: Sql,
  projectId: string,
  target: { channel: string; platforms: Platform[]; commitSha: string; rolloutPercent?: number },
  fetchAsClient?: ClientFetch,
): Promise<LiveRelease[]> {
  const bundles = (await Promise.all(target.platforms.map((platform) => getBundleUpdate(db, projectId, platform, target.commitSha)))).filter(
    (bundle) => bundle !== null,
  );
  if (bundles.length === 0) {
    const which = target.platforms.length === 1 ? `${target.platforms[0]} bundle` : "bundle";
    throw new NotFoundError(`The project has no ${which} of commit ${target.commitSha}.`, "bundle_not_found");
  }
  const failures = await checkBundles(db, bundles, fetchAsClient);
  for (const [index, bundle] of bundles.entries()) await setDeliveryError(db, bundle, failures[index]);
  throwIfFailed(bundles, failures);
  const streams = bundles.map((bundle) => ({ channel: target.channel, platform: bundle.platform, runtimeVersion: bundle.runtimeVersion }));
  await db.transaction(async (tx) => {
    for (const stream of streams) await insertRelease(tx, { projectId, ...stream, commitSha: target.commitSha, rolloutPercent: target.rolloutPercent });
  });
  return liveReleasesOf(db, projectId, streams);
}

/** Tells apps of a runtime version on a channel to run the update embedded in their binary (`rollBackToEmbedded`). */
async function rollBackToEmbedded(db: Sql, projectId: string, target: { channel: string; platforms: Platform[]; runtimeVersion: string }): Promise<LiveRelease[]> {
  const streams = (await listLiveReleases(db, projectId))
    .filter((live) => live.channel === target.channel && live.runtimeVersion === target.runtimeVersion && (target.platforms as string[]).includes(live.platform))
    .map(({ channel, platform, runtimeVersion }) => ({ channel, platform, runtimeVersion }));
  if (streams.length === 0) {
    throw new NotFoundError(`The project has released nothing for runtime version ${target.runtimeVersion} on channel ${target.channel}.`, "release_not_found");
  }
  await db.transaction(async (tx) => {
    for (const stream of streams) await insertRelease(tx, { projectId, ...stream, commitSha: null });
  });
  return liveReleasesOf(db, projectId, streams);
}

async function liveReleasesOf(db: Sql, projectId: string, streams: { channel: string; platform: string; runtimeVersion: string }[]): Promise<LiveRelease[]> {
  const live = await listLiveReleases(db, projectId);
  return streams.map(
    (stream) => live.find((entry) => entry.channel === stream.channel && entry.platform === stream.platform && entry.runtimeVersion === stream.runtimeVersion) as LiveRelease,
  );
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
  /** Whether the update URL serves this bundle now, on any channel (to all devices or some). */
  live: boolean;
  /** Why its last delivery check failed; null when it passed. */
  deliveryError: string | null;
}

type EntrySummary = Omit<ReleaseEntry, "releasedAt"> & { releasedAt: string };

/** A live release as the API and dashboard show it. */
export type ReleaseSummary = Omit<LiveRelease, "releasedAt" | "stable"> & { releasedAt: string; stable: EntrySummary | null };

const entrySummary = (entry: ReleaseEntry): EntrySummary => ({ ...entry, releasedAt: entry.releasedAt.toISOString() });

/** A live release with its dates as ISO strings. */
export const releaseSummary = (live: LiveRelease): ReleaseSummary => ({
  ...live,
  releasedAt: live.releasedAt.toISOString(),
  stable: live.stable && entrySummary(live.stable),
});

/** A project's bundles, newest first, and what each stream (channel, platform, runtime version) serves. */
export async function listProjectBundles(db: Sql, projectId: string): Promise<{ bundles: BundleSummary[]; releases: ReleaseSummary[] }> {
  const [bundles, releases] = await Promise.all([listBundleUpdates(db, projectId), listLiveReleases(db, projectId)]);
  const live = new Set(
    releases.flatMap((entry) => [entry.commitSha, entry.stable?.commitSha].filter((sha) => sha).map((sha) => `${entry.platform}/${entry.runtimeVersion}/${sha}`)),
  );
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
      deliveryError: bundle.deliveryError ?? null,
    })),
    releases: releases.map(releaseSummary),
  };
}
