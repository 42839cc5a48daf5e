import { restoreAssetsOfProject } from "@/lib/assets";
import { ensureBackendDevServer, restoreBackendEnvToSandbox } from "@/lib/cloud/restore";
import { log } from "@/lib/log";
import { mirrorProjectRepository, restoreProjectRepository } from "@/lib/repository-mirror";
import { ensureProjectSandbox } from "@/lib/projects";
import { ensureAppDevServer } from "@/lib/dev-servers";
import type { Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { updateProjectSandbox, type Project } from "@/lib/store/projects";

/**
 * A project's workspace: its sandbox with everything the project recorded restored into it.
 * This is the one place that knows what a (re)started or new sandbox gets back (assets, the
 * backend URL, both dev servers); it sits above lib/assets and lib/cloud, which take the
 * opener ({@link openProjectSandbox}) as a parameter where they may need a sandbox.
 */

/**
 * The sandbox lifecycle hook: the recorded assets come back first; then the env file is restored
 * before the app dev server starts (so it reads the URL), then the backend dev server is started again.
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

/**
 * The project's sandbox, created on first use when the project has none yet or its sandbox is
 * gone. A new sandbox gets the app repository's newest mirror, then what a restarted one gets
 * (recorded assets, the backend URL, the backend dev server).
 */
export async function openProjectSandbox(project: Project): Promise<Sandbox> {
  const { sandbox, created } = await ensureProjectSandbox(await getStore(), project);
  if (created) {
    // A project whose sandbox was lost gets its app back from the newest mirror (none: a new project).
    await restoreProjectRepository(sandbox, project.id);
    await afterSandboxStart(sandbox, project);
  }
  return sandbox;
}

/**
 * Restarts a project's sandbox like the platform would, then runs {@link afterSandboxStart};
 * answers the backend dev server in the words of GET /api/backend/status.
 */
export async function restartProjectSandbox(sandbox: Sandbox, project: Project): Promise<{ previewUrl: string; backendDevServer: "running" | "stopped" }> {
  // Saved before any process is stopped; a failed mirror is recorded and the restart goes on.
  await mirrorProjectRepository(sandbox, project.id);
  await sandbox.restart();
  const { previewUrl, backendDevServer } = await afterSandboxStart(sandbox, project);
  return { previewUrl, backendDevServer: backendDevServer ? "running" : "stopped" };
}
