import { restoreAssetsOfProject } from "@/lib/assets";
import { log } from "@/lib/log";
import { ensureAppDevServer, type Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import type { BackendCredentials } from "@/lib/store/credentials";
import { updateProjectSandbox, type Project } from "@/lib/store/projects";
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
 * Brings a connected project's backend dev server back when nobody in this process reads its
 * output (service restart, reconnect after a pause): it is restarted attached to the scanner.
 * Returns whether a backend dev server runs afterwards.
 */
export async function ensureBackendDevServer(sandbox: Sandbox, projectId: string, credentials: BackendCredentials): Promise<boolean> {
  if (isBackendDevServerAttached(sandbox) && (await isBackendDevServerRunning(sandbox))) return true;
  return startBackendDevServer(sandbox, projectId, { adminKey: credentials.adminKey, deploymentUrl: credentials.deploymentUrl });
}

/**
 * The sandbox lifecycle hook: after a (re)start the env file is restored before the app dev
 * server starts (so it reads the URL), then the backend dev server is started again.
 */
export async function afterSandboxStart(sandbox: Sandbox, project: Project): Promise<{ previewUrl: string; backendDevServer: boolean }> {
  await restoreAssetsOfProject(sandbox, project);
  const credentials = await restoreBackendEnvToSandbox(sandbox, project.id);
  const previewUrl = await ensureAppDevServer(sandbox);
  if (previewUrl !== project.previewUrl) {
    await updateProjectSandbox(await getStore(), project.id, { sandboxId: sandbox.sandboxId, previewUrl });
  }
  const backendDevServer = credentials ? await ensureBackendDevServer(sandbox, project.id, credentials) : false;
  if (credentials && !backendDevServer) log.warn("backend dev server did not come back after a sandbox start", { projectId: project.id });
  return { previewUrl, backendDevServer };
}

/** Restarts a project's sandbox like the platform would, then runs {@link afterSandboxStart}. */
export async function restartProjectSandbox(sandbox: Sandbox, project: Project) {
  await sandbox.restart();
  return afterSandboxStart(sandbox, project);
}
