"use client";

import { useState } from "react";
import { callApi, messageOf } from "./api";
import { formatBytes } from "./upload";

/** A bundle as GET /api/projects/<id>/bundles lists it. */
export interface BundleEntry {
  commitSha: string;
  commitMessage: string;
  platform: string;
  runtimeVersion: string;
  size: number;
  createdAt: string;
  live: boolean;
  deliveryError: string | null;
}

/**
 * What a stream (channel, platform, runtime version) serves; `commitSha: null` is the update
 * embedded in the app; under a staged rollout the other devices get `stable`.
 */
export interface ReleaseEntry {
  channel: string;
  platform: string;
  runtimeVersion: string;
  commitSha: string | null;
  rolloutPercent: number;
  releasedAt: string;
  stable: { commitSha: string | null } | null;
}

export interface BundleList {
  bundles: BundleEntry[];
  releases: ReleaseEntry[];
}

const shortSha = (sha: string) => sha.slice(0, 7);
const servedText = (sha: string | null) => (sha ? `serves ${shortSha(sha)}` : "rolled back to the embedded update");

/** A commit's bundles (one per platform) as one row. */
function byCommit(bundles: BundleEntry[]) {
  const commits = new Map<string, BundleEntry[]>();
  for (const bundle of bundles) commits.set(bundle.commitSha, [...(commits.get(bundle.commitSha) ?? []), bundle]);
  return [...commits.values()].map((entries) => ({
    ...entries[0],
    platforms: entries.map((entry) => entry.platform).join(", "),
    size: entries.reduce((total, entry) => total + entry.size, 0),
    live: entries.some((entry) => entry.live),
    deliveryError: entries.find((entry) => entry.deliveryError)?.deliveryError ?? null,
  }));
}
// Rendered on the server first: a fixed UTC format, so the browser's locale and time zone cannot make hydration differ.
const utcMinute = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

/**
 * The project's static bundles (newest first, one row per commit with its platforms) and the
 * update URL apps check: what each channel serves per platform and runtime version (with a staged
 * rollout's share), a rollback (or promote) button on every other commit, a rollback to the update
 * embedded in the app (POST /api/projects/<id>/bundles/live), and why a delivery check failed.
 */
export function BundlesPanel({ projectId, updateUrl, initial }: { projectId: string; updateUrl: string; initial: BundleList }) {
  const [list, setList] = useState(initial);
  const [pending, setPending] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const api = `/api/projects/${encodeURIComponent(projectId)}/bundles`;

  async function release(key: string, target: { commitSha: string } | { embedded: true; runtimeVersion: string; channel: string; platform: string }) {
    setPending(key);
    setError(null);
    try {
      await callApi(`${api}/live`, { json: target });
      setList(await callApi<BundleList>(api));
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setPending(null);
    }
  }

  const liveCreatedAt = (runtimeVersion: string) =>
    list.bundles.find((bundle) => bundle.live && bundle.runtimeVersion === runtimeVersion)?.createdAt;

  return (
    <section id="bundles" className="card stack" aria-labelledby="bundles-title">
      <h2 id="bundles-title">Updates</h2>
      <p className="small muted">
        Update URL for the app&apos;s <code>updates.url</code>: <code data-testid="update-url">{updateUrl}</code>
      </p>
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
      {list.releases.map((entry) => (
        <p
          key={`${entry.channel}/${entry.platform}/${entry.runtimeVersion}`}
          className="row spread small"
          data-testid={`release-${entry.channel}-${entry.platform}-${entry.runtimeVersion}`}
        >
          <span>
            {entry.channel} · {entry.platform} · runtime {entry.runtimeVersion}: {servedText(entry.commitSha)}
            {entry.rolloutPercent < 100 && (
              <span className="muted">
                {" "}
                to {entry.rolloutPercent} % of devices; the others: {entry.stable ? servedText(entry.stable.commitSha) : "no update"}
              </span>
            )}
          </span>
          {entry.commitSha && (
            <button
              type="button"
              className="link-button danger-text"
              disabled={pending !== null}
              onClick={() =>
                release(`embedded:${entry.channel}/${entry.platform}/${entry.runtimeVersion}`, {
                  embedded: true,
                  runtimeVersion: entry.runtimeVersion,
                  channel: entry.channel,
                  platform: entry.platform,
                })
              }
            >
              Roll back to embedded
            </button>
          )}
        </p>
      ))}
      {list.bundles.length === 0 ? (
        <p className="muted">No bundles yet. A bundle build publishes one.</p>
      ) : (
        <ul className="bundle-list" aria-label="Bundles">
          {byCommit(list.bundles).map((bundle) => {
            const live = liveCreatedAt(bundle.runtimeVersion);
            return (
              <li key={bundle.commitSha} className="row spread small" data-commit={bundle.commitSha}>
                <span>
                  <code>{shortSha(bundle.commitSha)}</code> {bundle.commitMessage || <span className="muted">(no message)</span>}
                  <span className="muted">
                    {" "}
                    · {bundle.platforms} · runtime {bundle.runtimeVersion} · {formatBytes(bundle.size)} · <time dateTime={bundle.createdAt}>{utcMinute(bundle.createdAt)}</time>
                  </span>
                  {bundle.deliveryError && <span className="danger-text"> · delivery check failed: {bundle.deliveryError}</span>}
                </span>
                {bundle.live ? (
                  <span className="badge badge-connected">Live</span>
                ) : (
                  <button type="button" disabled={pending !== null} onClick={() => release(bundle.commitSha, { commitSha: bundle.commitSha })}>
                    {pending === bundle.commitSha ? "Releasing…" : live && live < bundle.createdAt ? "Promote" : "Roll back"}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
