"use client";

import { useEffect, useState } from "react";
import { pollBackendSnapshot } from "@/app/projects/[id]/actions";
import type { BackendSnapshot } from "@/app/projects/[id]/data";
import { callApiOrToast, messageOf } from "./api";
import { BackendBadge } from "./backend-badge";
import { BackendProgress } from "./backend-progress";
import { ConnectedDetails } from "./backend-connected";

/** How often the card re-reads the journal while a run is going. */
const POLL_INTERVAL_MS = 700;

export interface BackendCardProps {
  projectId: string;
  initial: BackendSnapshot;
  /** Whether "Connect your own account" (OAuth) is configured. */
  oauthAvailable: boolean;
  /** Base of deployment dashboard links; null when there is no dashboard (local emulator). */
  dashboardBase: string | null;
  /** A message to show when the page opens (the outcome of an OAuth round trip). */
  notice: string | null;
}

/**
 * The project's backend: not connected (enable, or connect your own account), connecting (live
 * step progress), connected (deployment URL, dashboard link, disconnect), failed (message, retry).
 */
export function BackendCard({ projectId, initial, oauthAvailable, dashboardBase, notice }: BackendCardProps) {
  const [snapshot, setSnapshot] = useState(initial);
  const [enabling, setEnabling] = useState(false);
  const [error, setError] = useState<string | null>(notice);
  const state = snapshot.backendProject;
  // The request is in flight before the run has written `connecting`: show it at once.
  const shown = enabling && state?.kind !== "connected" ? { kind: "connecting" as const } : state;

  useEffect(() => {
    if (shown?.kind !== "connecting") return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      const next = await pollBackendSnapshot(projectId).catch(() => null);
      if (cancelled) return;
      if (next) setSnapshot(next);
      timer = setTimeout(tick, POLL_INTERVAL_MS);
    };
    timer = setTimeout(tick, POLL_INTERVAL_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [projectId, shown?.kind]);

  async function refresh() {
    const next = await pollBackendSnapshot(projectId).catch(() => null);
    if (next) setSnapshot(next);
  }

  async function enable() {
    setEnabling(true);
    setError(null);
    try {
      await callApiOrToast("/api/cloud/enable", { json: { projectId } });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      await refresh();
      setEnabling(false);
    }
  }

  return (
    <section id="backend" className="card stack" aria-labelledby="backend-title" data-backend-state={shown?.kind ?? "none"}>
      <div className="row spread">
        <h2 id="backend-title">Cloud backend</h2>
        <BackendBadge state={shown} />
      </div>

      {!shown && (
        <>
          <p className="muted">
            One click creates a backend project, adds the starter <code>convex/</code> folder, the provider wrapper and the{" "}
            <code>convex</code> package to the app, and starts the backend dev server.
          </p>
          <div className="row">
            <button type="button" className="primary" onClick={enable}>
              Enable cloud backend
            </button>
            {oauthAvailable && (
              <a className="button" href={`/backend/connect?projectId=${encodeURIComponent(projectId)}`}>
                Connect your own account
              </a>
            )}
          </div>
        </>
      )}

      {shown?.kind === "connecting" && <BackendProgress progress={snapshot.progress} />}

      {shown?.kind === "connected" && (
        <ConnectedDetails projectId={projectId} state={shown} dashboardBase={dashboardBase} account={snapshot.account} onDisconnected={refresh} />
      )}

      {shown?.kind === "failed" && (
        <>
          <p className="alert" role="alert" data-testid="backend-error">
            {shown.errorMessage}
          </p>
          <div className="row">
            <button type="button" className="primary" onClick={enable}>
              Retry
            </button>
          </div>
        </>
      )}

      {error && shown?.kind !== "failed" && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
