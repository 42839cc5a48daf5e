"use client";

import { useEffect, useState } from "react";
import type { ApiBackendDevServerState, ApiBackendStatus } from "@/lib/api-contract/types";
import type { BackendProjectState } from "@/lib/store/projects";
import { callApi, callApiOrToast, messageOf } from "./api";
import { BackendAccountFacts } from "./backend-account";
import { ConfirmStep } from "./confirm-step";

type Connected = Extract<BackendProjectState, { kind: "connected" }>;
type DevServer = ApiBackendDevServerState;

/** What each missing piece of the app's wiring means to a person. */
const WIRING_LABELS: Record<string, string> = {
  backend_files: "the convex/ folder",
  layout_wrapper: "the provider in app/_layout.tsx",
  backend_package: "the convex package",
  backend_url: "EXPO_PUBLIC_CONVEX_URL in .env.local",
};

export interface ConnectedDetailsProps {
  projectId: string;
  state: Connected;
  /** Base of hosted dashboard links; null for the emulator, whose link opens our deployment page. */
  dashboardBase: string | null;
  account: "managed" | "own" | null;
  /** Called after a successful disconnect, to re-read the state. */
  onDisconnected: () => Promise<void>;
}

/** A connected backend: where it lives, its dev server, and disconnecting. */
export function ConnectedDetails({ projectId, state, dashboardBase, account, onDisconnected }: ConnectedDetailsProps) {
  const [devServer, setDevServer] = useState<DevServer | null>(null);
  const [missingWiring, setMissingWiring] = useState<string[]>([]);
  const [confirming, setConfirming] = useState(false);
  const [deleteBackendProject, setDeleteBackendProject] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    callApi<ApiBackendStatus>(`/api/backend/status?projectId=${encodeURIComponent(projectId)}`).then(
      (status) => {
        if (cancelled) return;
        setDevServer(status.backendDevServer);
        setMissingWiring(status.missingSandboxWiring);
      },
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
      await callApiOrToast("/api/backend/dev/start", { json: { projectId } });
      setDevServer("running");
    });

  // Enable on a connected project finishes exactly the missing pieces, then everything runs.
  const finishSetup = () =>
    act(async () => {
      await callApiOrToast("/api/cloud/enable", { json: { projectId } });
      setMissingWiring([]);
      setDevServer("running");
    });

  const disconnect = () =>
    act(async () => {
      await callApiOrToast("/api/backend/managed/disconnect", { json: { projectId, deleteBackendProject } });
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
          {" · "}
          {dashboardBase ? (
            <a href={dashboardBase + encodeURIComponent(state.deploymentName)} target="_blank" rel="noreferrer" data-testid="deployment-dashboard">
              Open dashboard
            </a>
          ) : (
            <a href={`/projects/${encodeURIComponent(projectId)}/deployment`} data-testid="deployment-dashboard">
              Open deployment
            </a>
          )}
        </dd>
        <BackendAccountFacts teamSlug={state.teamSlug} projectSlug={state.projectSlug} account={account} />
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
      {missingWiring.length > 0 && (
        <div className="warning stack" data-testid="missing-wiring">
          <p>
            The app is not set up for this backend yet: it lacks{" "}
            {missingWiring.map((step) => WIRING_LABELS[step] ?? step).join(", ")}.
          </p>
          <div className="row">
            <button type="button" className="primary" onClick={finishSetup} disabled={busy}>
              {busy ? "Setting up…" : "Set up the app"}
            </button>
          </div>
        </div>
      )}

      {confirming ? (
        <ConfirmStep action="Disconnect" busyAction="Disconnecting…" busy={busy} onConfirm={disconnect} onCancel={() => setConfirming(false)}>
          <label className="row">
            <input type="checkbox" checked={deleteBackendProject} onChange={(event) => setDeleteBackendProject(event.target.checked)} />
            Also delete the backend project (managed projects only)
          </label>
        </ConfirmStep>
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
