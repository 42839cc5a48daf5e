"use client";

import { useEffect, useState } from "react";
import type { BackendProjectState } from "@/lib/store/projects";
import { callApi, messageOf } from "./api";

type Connected = Extract<BackendProjectState, { kind: "connected" }>;
type DevServer = "running" | "stopped";

export interface ConnectedDetailsProps {
  projectId: string;
  state: Connected;
  dashboardBase: string | null;
  /** Called after a successful disconnect, to re-read the state. */
  onDisconnected: () => Promise<void>;
}

/** A connected backend: where it lives, its dev server, and disconnecting. */
export function ConnectedDetails({ projectId, state, dashboardBase, onDisconnected }: ConnectedDetailsProps) {
  const [devServer, setDevServer] = useState<DevServer | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [deleteBackendProject, setDeleteBackendProject] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    callApi<{ devServer: DevServer }>(`/api/backend/status?projectId=${encodeURIComponent(projectId)}`).then(
      (status) => !cancelled && setDevServer(status.devServer),
      // Without a status answer the line is simply not shown.
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [projectId]);

  async function act(run: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  }

  const startDevServer = () =>
    act(async () => {
      await callApi("/api/backend/dev/start", { json: { projectId } });
      setDevServer("running");
    });

  const disconnect = () =>
    act(async () => {
      await callApi("/api/backend/managed/disconnect", { json: { projectId, deleteBackendProject } });
      setConfirming(false);
      await onDisconnected();
    });

  return (
    <>
      <dl className="facts">
        <dt>Deployment URL</dt>
        <dd>
          <a href={state.deploymentUrl} target="_blank" rel="noreferrer" data-testid="deployment-url">
            {state.deploymentUrl}
          </a>
        </dd>
        <dt>Deployment</dt>
        <dd>
          <code>{state.deploymentName}</code>
          {dashboardBase && (
            <>
              {" · "}
              <a href={dashboardBase + encodeURIComponent(state.deploymentName)} target="_blank" rel="noreferrer">
                Open dashboard
              </a>
            </>
          )}
        </dd>
        <dt>Project</dt>
        <dd>
          <code>
            {state.teamSlug}/{state.projectSlug}
          </code>
        </dd>
        {devServer && (
          <>
            <dt>Dev server</dt>
            <dd className="row">
              <span className={`dot dot-${devServer}`} /> {devServer}
              {devServer === "stopped" && (
                <button type="button" onClick={startDevServer} disabled={busy}>
                  Start
                </button>
              )}
            </dd>
          </>
        )}
      </dl>
      {state.warningMessage && <p className="warning">{state.warningMessage}</p>}

      {confirming ? (
        <div className="confirm stack">
          <label className="row">
            <input type="checkbox" checked={deleteBackendProject} onChange={(event) => setDeleteBackendProject(event.target.checked)} />
            Also delete the backend project (managed projects only)
          </label>
          <div className="row">
            <button type="button" className="danger" onClick={disconnect} disabled={busy}>
              {busy ? "Disconnecting…" : "Disconnect"}
            </button>
            <button type="button" onClick={() => setConfirming(false)} disabled={busy}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div className="row">
          <button type="button" onClick={() => setConfirming(true)}>
            Disconnect…
          </button>
        </div>
      )}
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
