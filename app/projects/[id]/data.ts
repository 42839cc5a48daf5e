import type { ProvisioningSteps } from "@/lib/cloud/provisioning-run";
import type { BackendSettings } from "@/lib/cloud/backend-settings";
import { getBlobStore } from "@/lib/blob";
import type { Config } from "@/lib/config";
import { log } from "@/lib/log";
import { ERROR_EVENT, errorChannel } from "@/lib/realtime";
import { screenshotPathname } from "@/lib/screenshots";
import type { SqlExecutor } from "@/lib/store";
import { getCredentials } from "@/lib/store/credentials";
import { getRunningOperation, type OperationKind } from "@/lib/store/operations";
import type { BackendProjectState, Project } from "@/lib/store/projects";

/** A journaled step of a provisioning run (lib/cloud/provisioning-run.ts). */
export type ProgressStep = keyof ProvisioningSteps;

const STEP_ORDER: ProgressStep[] = ["created", "provisioned", "credentialsStored", "sandboxReady"];

/** What the backend card shows; names of finished steps only, never their contents. */
export interface BackendSnapshot {
  backendProject: BackendProjectState | null;
  /** The running provisioning run: its kind and the steps it finished so far; null when none runs. */
  progress: { kind: OperationKind; finished: ProgressStep[] } | null;
  /** Whose account holds the backend project: this service's team, or the user's own (OAuth); null when none. */
  account: "managed" | "own" | null;
}

/** The project's backend state plus the progress of a running enable/connect, from the journal. */
export async function readBackendSnapshot(db: SqlExecutor, project: Project): Promise<BackendSnapshot> {
  const [running, credentials] = await Promise.all([getRunningOperation<ProvisioningSteps>(db, project.id), getCredentials(db, project.id)]);
  return {
    backendProject: project.backendProject,
    progress: running ? { kind: running.kind, finished: STEP_ORDER.filter((step) => Boolean(running.steps[step])) } : null,
    account: credentials ? (credentials.mode === "managed" ? "managed" : "own") : null,
  };
}

/**
 * How the browser receives a project's error notifications (event `event`): this app's SSE
 * route, or Pusher with its public app key and cluster (never the secret), joining the private
 * channel through `authEndpoint` and reading the stored history from `historyUrl`.
 */
export type RealtimeClientSettings = { event: string } & (
  | { transport: "sse"; streamUrl: string }
  | { transport: "pusher"; key: string; cluster: string; channel: string; authEndpoint: string; historyUrl: string }
);

export function realtimeClientSettings(config: Config, projectId: string): RealtimeClientSettings {
  if (config.REALTIME_DRIVER === "pusher" && config.PUSHER_KEY && config.PUSHER_CLUSTER) {
    return {
      event: ERROR_EVENT,
      transport: "pusher",
      key: config.PUSHER_KEY,
      cluster: config.PUSHER_CLUSTER,
      channel: errorChannel(projectId),
      authEndpoint: "/api/realtime/auth",
      historyUrl: `/api/projects/${projectId}/errors`,
    };
  }
  return { event: ERROR_EVENT, transport: "sse", streamUrl: `/api/projects/${projectId}/errors/stream` };
}

/**
 * Base of hosted deployment dashboard links (`<host>/d/<deploymentName>`); null for the local
 * emulator, which has none: its link opens this dashboard's readable page of the deployment.
 */
export function deploymentDashboardBase(settings: BackendSettings): string | null {
  return settings.provider === "hosted" ? `${settings.dashboardHost}/d/` : null;
}

export interface StoredScreenshots {
  mobileUrl: string;
  desktopUrl: string;
  /** ISO 8601: when the older of the two was stored. */
  takenAt: string;
}

/**
 * The project's last screenshots (spec 2.9 fixed paths), with the upload time in the query so a
 * browser never shows a cached older picture; null when there are none (or the store fails).
 */
export async function findScreenshots(projectId: string): Promise<StoredScreenshots | null> {
  try {
    const store = getBlobStore();
    const [mobile, desktop] = await Promise.all([
      store.head(screenshotPathname(projectId, "mobile")),
      store.head(screenshotPathname(projectId, "desktop")),
    ]);
    if (!mobile || !desktop) return null;
    const versioned = (blob: { url: string; uploadedAt: Date }) => `${blob.url}?v=${blob.uploadedAt.getTime()}`;
    const takenAt = new Date(Math.min(mobile.uploadedAt.getTime(), desktop.uploadedAt.getTime())).toISOString();
    return { mobileUrl: versioned(mobile), desktopUrl: versioned(desktop), takenAt };
  } catch (error) {
    log.warn("could not read the project's screenshots", { projectId, error });
    return null;
  }
}
