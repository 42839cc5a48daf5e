"use client";

import { useState } from "react";
import { callApi, messageOf } from "./api";
import { formatBytes } from "./upload";

/** A bundle as GET /api/projects/<id>/bundles lists it. */
export interface BundleEntry {
  commitSha: string;
  commitMessage: string;
  runtimeVersion: string;
  size: number;
  createdAt: string;
  live: boolean;
}

/** What a runtime version's update URL serves; `commitSha: null` is the update embedded in the app. */
export interface ReleaseEntry {
  runtimeVersion: string;
  commitSha: string | null;
  releasedAt: string;
}

export interface BundleList {
  bundles: BundleEntry[];
  releases: ReleaseEntry[];
}

const shortSha = (sha: string) => sha.slice(0, 7);
// Rendered on the server first: a fixed UTC format, so the browser's locale and time zone cannot make hydration differ.
const utcMinute = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

/**
 * The project's static bundles (newest first) and the update URL apps check: which bundle is
 * live per runtime version, a rollback (or promote) button on every other bundle, and a rollback
 * to the update embedded in the app (POST /api/projects/<id>/bundles/live).
 */
export function BundlesPanel({ projectId, updateUrl, initial }: { projectId: string; updateUrl: string; initial: BundleList }) {
  const [list, setList] = useState(initial);
  const [pending, setPending] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const api = `/api/projects/${encodeURIComponent(projectId)}/bundles`;

  async function release(key: string, target: { commitSha: string } | { embedded: true; runtimeVersion: string }) {
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
        <p key={entry.runtimeVersion} className="row spread small" data-testid={`release-${entry.runtimeVersion}`}>
          <span>
            Runtime {entry.runtimeVersion}: {entry.commitSha ? <>serves {shortSha(entry.commitSha)}</> : <>rolled back to the embedded update</>}
          </span>
          {entry.commitSha && (
            <button
              type="button"
              className="link-button danger-text"
              disabled={pending !== null}
              onClick={() => release(`embedded:${entry.runtimeVersion}`, { embedded: true, runtimeVersion: entry.runtimeVersion })}
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
          {list.bundles.map((bundle) => {
            const live = liveCreatedAt(bundle.runtimeVersion);
            return (
              <li key={bundle.commitSha} className="row spread small" data-commit={bundle.commitSha}>
                <span>
                  <code>{shortSha(bundle.commitSha)}</code> {bundle.commitMessage || <span className="muted">(no message)</span>}
                  <span className="muted">
                    {" "}
                    · runtime {bundle.runtimeVersion} · {formatBytes(bundle.size)} · <time dateTime={bundle.createdAt}>{utcMinute(bundle.createdAt)}</time>
                  </span>
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
