import { deleteManagedProject, withRetries } from "@/lib/backend";
import { BadRequestError, ConflictError } from "@/lib/errors";
import { log } from "@/lib/log";
import { startAppDevServer, stopAppDevServer } from "@/lib/dev-servers";
import { getSandboxProvider, isSandboxError, SandboxNotFoundError, type Sandbox } from "@/lib/sandbox";
import { getStore, type SqlExecutor } from "@/lib/store";
import { deleteCredentials, getCredentials, type BackendCredentials } from "@/lib/store/credentials";
import { forgetFailedRuns, getRunningOperation } from "@/lib/store/operations";
import { lockProjectRow, setBackendProject, type Project } from "@/lib/store/projects";
import { stopBackendDevServer } from "./backend-dev-server";
import { requireManagedSettings } from "./enable";
import { removeBackendUrlFromEnvFile } from "./env-file";
import { ProvisioningInProgressError } from "./errors";

export interface DisconnectOptions {
  /**
   * Also delete the backend project (managed mode only: an OAuth project lives in the user's own
   * account, which is theirs to manage).
   * @default false
   */
  deleteBackendProject?: boolean;
  /** The project's sandbox was just killed (project delete): there is nothing in it to unwire. */
  sandboxGone?: boolean;
}

/**
 * Locks the project row and refuses while a provisioning run is live: its end would write the
 * state and credentials back. A connected project cannot start a new run (the runner answers its
 * stored state), so once this check passed on a connected project nothing races the disconnect.
 */
async function refuseWhileProvisioning(tx: SqlExecutor, projectId: string): Promise<void> {
  await lockProjectRow(tx, projectId);
  if (await getRunningOperation(tx, projectId)) throw new ProvisioningInProgressError();
}

/**
 * A running app dev server inlined the old URL: restart it so the app stops calling the
 * deployment. Not fatal: the URL is gone from `.env.local`, so the next start reads none.
 */
async function restartRunningAppDevServer(sandbox: Sandbox, projectId: string): Promise<void> {
  try {
    if (await stopAppDevServer(sandbox)) await startAppDevServer(sandbox);
  } catch (error) {
    log.warn("app dev server restart after disconnect failed", { projectId, error });
  }
}

/**
 * Stops the backend dev server, removes the deployment URL from `.env.local` and restarts a
 * running app dev server, so the app runs without a backend (its wrapper renders the app
 * without a client when the URL is unset); a sandbox that no longer exists has none of these.
 */
async function unwireSandbox(project: Project): Promise<void> {
  if (!project.sandboxId) return;
  try {
    const sandbox = await getSandboxProvider().connect(project.sandboxId);
    await stopBackendDevServer(sandbox);
    await removeBackendUrlFromEnvFile(sandbox);
    await restartRunningAppDevServer(sandbox, project.id);
  } catch (error) {
    if (!isSandboxError(error, SandboxNotFoundError)) throw error;
  }
}

/** The numeric id of the managed backend project to delete; OAuth projects are refused. */
function deletableProjectId(credentials: BackendCredentials): number {
  if (credentials.mode === "oauth") {
    throw new BadRequestError(
      "This backend project belongs to the user's own backend account (OAuth mode) and is not deleted by this service; " +
        "disconnect without deleteBackendProject and delete it on the backend dashboard if wanted.",
      "oauth_project_not_deletable",
    );
  }
  if (credentials.backendProjectId === null) {
    throw new ConflictError("The stored credentials do not record the backend project's id; delete it on the backend dashboard.", "backend_project_id_unknown");
  }
  return credentials.backendProjectId;
}

/**
 * POST /api/backend/managed/disconnect: stops the backend dev server and unsets the app's
 * backend URL, optionally deletes the
 * managed backend project (by its stored numeric id), then removes the credentials and clears
 * the state. Refused with 409 while a provisioning run is live. A failure before the last step
 * leaves the project connected, so the call can simply be repeated; disconnecting twice is a no-op.
 */
export async function disconnectBackend(project: Project, options: DisconnectOptions = {}): Promise<void> {
  const db = await getStore();
  const credentials = await getCredentials(db, project.id);
  const deletion =
    options.deleteBackendProject && credentials
      ? { projectId: deletableProjectId(credentials), settings: requireManagedSettings() }
      : null;

  await db.transaction(async (tx) => {
    await refuseWhileProvisioning(tx, project.id);
    // A failed run's journal would hand the project about to be deleted to the next run.
    if (deletion) await forgetFailedRuns(tx, project.id);
  });
  if (!options.sandboxGone) await unwireSandbox(project);
  if (deletion) {
    const { projectId, settings } = deletion;
    await withRetries("delete project", () => deleteManagedProject({ teamScopedToken: settings.teamScopedToken, projectId }, settings));
  }
  await db.transaction(async (tx) => {
    await refuseWhileProvisioning(tx, project.id);
    await deleteCredentials(tx, project.id);
    await setBackendProject(tx, project.id, null);
  });
}
