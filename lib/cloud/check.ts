import { BACKEND_CONFIG_FILE } from "@/lib/app-names";
import { getConfig } from "@/lib/config";
import { ConflictError } from "@/lib/errors";
import type { OpenProjectSandbox } from "@/lib/projects";
import { listStoredErrorNotifications, type StoredErrorNotification } from "@/lib/realtime/error-notifications";
import { APP_DIR } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { untilPushStartedAfter } from "./backend-dev-server";
import { getBackendCredentials } from "./credentials";
import { BackendDevServerUnavailableError, CheckTimeoutError } from "./errors";
import { ensureBackendDevServer } from "./restore";

export interface BackendCheck {
  /** Whether the backend dev server pushed the files as they were when the check began. */
  pushed: boolean;
  /** The backend dev server's unresolved errors after that push, oldest first. */
  errors: StoredErrorNotification[];
  /** How long the check took. */
  durationMs: number;
}

/**
 * POST /api/projects/<id>/check: whether the backend code as it is now works. The CLI pushes
 * again whenever a file it read changes (also during a push), so the check rewrites the
 * config file it reads first (same content, new mtime) and waits for the outcome of the first
 * push that started after that: a push that read older files is always followed by one that
 * reads these. A server this process does not read (stopped, started before a restart of the
 * service) is restarted first. Bounded by CHECK_TIMEOUT_MS (504).
 */
export async function checkBackend(project: Project, openSandbox: OpenProjectSandbox): Promise<BackendCheck> {
  const credentials = await getBackendCredentials(project.id);
  if (!credentials) throw new ConflictError("The project has no connected backend.", "backend_not_connected");
  const began = performance.now();
  const timeoutMs = getConfig().CHECK_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const sandbox = await openSandbox(project);
  const configFile = `${APP_DIR}/${BACKEND_CONFIG_FILE}`;
  if (!(await sandbox.files.exists(configFile))) {
    throw new ConflictError(`The app has no ${BACKEND_CONFIG_FILE}; enable the backend again to wire it.`, "backend_not_wired");
  }
  if (!(await ensureBackendDevServer(sandbox, project.id, credentials))) throw new BackendDevServerUnavailableError();
  await sandbox.files.write(configFile, await sandbox.files.read(configFile));
  const push = await untilPushStartedAfter(sandbox, new Date(), signal).catch((error: unknown) => {
    if (signal.aborted) throw new CheckTimeoutError(timeoutMs);
    throw error;
  });
  if (!push) throw new BackendDevServerUnavailableError();
  const notifications = await listStoredErrorNotifications(await getStore(), project.id);
  const errors = notifications.filter((n) => n.source === "backend-dev" && n.type !== "resolved" && !n.resolvedAt);
  return { pushed: push.state === "pushed", errors, durationMs: Math.round(performance.now() - began) };
}
