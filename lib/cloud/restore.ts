import { ConflictError } from "@/lib/errors";
import type { OpenProjectSandbox } from "@/lib/projects";
import type { Sandbox } from "@/lib/sandbox";
import type { BackendCredentials } from "@/lib/store/credentials";
import type { Project } from "@/lib/store/projects";
import { isBackendDevServerAttached, isBackendDevServerRunning, startBackendDevServer } from "./backend-dev-server";
import { getBackendCredentials } from "./credentials";
import { writeBackendUrlToEnvFile } from "./env-file";
import { migrateLegacyBackendNames } from "./legacy-names";

/**
 * Spec 4.5 restore: writes `EXPO_PUBLIC_CONVEX_URL` back into `.env.local` from the stored
 * credentials, after migrating an app wired with the names of earlier versions. The injected
 * folder and wrapper are committed and persist, so they are never rewritten. Returns the
 * project's credentials (the backend dev server can then be started), null when it has none.
 */
export async function restoreBackendEnvToSandbox(sandbox: Sandbox, projectId: string): Promise<BackendCredentials | null> {
  const credentials = await getBackendCredentials(projectId);
  if (!credentials) return null;
  await migrateLegacyBackendNames(sandbox);
  await writeBackendUrl(sandbox, credentials);
  return credentials;
}

/** Writes the deployment URL of already loaded credentials into the sandbox's `.env.local`. */
export function writeBackendUrl(sandbox: Sandbox, credentials: Pick<BackendCredentials, "deploymentUrl">): Promise<void> {
  return writeBackendUrlToEnvFile(sandbox, credentials.deploymentUrl);
}

/**
 * Brings a connected project's backend dev server back when no live instance reads its output
 * (service restart, reconnect after a pause): it is restarted attached to the scanner.
 * Returns whether a backend dev server runs afterwards.
 */
export async function ensureBackendDevServer(sandbox: Sandbox, projectId: string, credentials: BackendCredentials): Promise<boolean> {
  if ((await isBackendDevServerAttached(sandbox, projectId)) && (await isBackendDevServerRunning(sandbox))) return true;
  return startBackendDevServer(sandbox, projectId, { adminKey: credentials.adminKey, deploymentUrl: credentials.deploymentUrl });
}

/**
 * POST /api/backend/dev/start: (re)starts a connected project's backend dev server attached to
 * the error scanner, after writing its URL into `.env.local` again. A project without a backend
 * is refused (409) before its sandbox is opened. Returns whether the server started.
 */
export async function startProjectBackendDevServer(project: Project, openSandbox: OpenProjectSandbox): Promise<boolean> {
  const credentials = await getBackendCredentials(project.id);
  if (!credentials) throw new ConflictError("The project has no connected backend.", "backend_not_connected");
  const sandbox = await openSandbox(project);
  await writeBackendUrl(sandbox, credentials);
  return startBackendDevServer(sandbox, project.id, { adminKey: credentials.adminKey, deploymentUrl: credentials.deploymentUrl });
}
