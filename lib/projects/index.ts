import { NotFoundError } from "@/lib/errors";
import { log } from "@/lib/log";
import { startAppDevServer } from "@/lib/dev-servers";
import { APP_TEMPLATE, getSandboxProvider, isSandboxError, SandboxNotFoundError, type Sandbox } from "@/lib/sandbox";
import { getStore, type SqlExecutor } from "@/lib/store";
import { claimProjectSandbox, deleteProject, getProject, insertProject, listProjects, renameProject, updateProjectSandbox, type Project } from "@/lib/store/projects";
import { pointAppAtUpdates } from "@/lib/updates/app-url";

/** A new sandbox seeded from `templates/app` with its app dev server running; killed again on failure. */
async function createRunningSandbox(): Promise<{ sandbox: Sandbox; previewUrl: string }> {
  const provider = getSandboxProvider();
  const sandbox = await provider.create({ template: APP_TEMPLATE });
  try {
    const { previewUrl } = await startAppDevServer(sandbox);
    return { sandbox, previewUrl };
  } catch (error) {
    await provider.kill(sandbox.sandboxId).catch((cleanupError: unknown) => {
      log.warn("cleanup of a sandbox that failed to start failed", { sandboxId: sandbox.sandboxId, error: cleanupError });
    });
    throw error;
  }
}

/** Gives a new sandbox's app the project's update URL; a failure leaves the app without one, logged. */
async function pointNewAppAtUpdates(sandbox: Sandbox, projectId: string): Promise<void> {
  await pointAppAtUpdates(sandbox, projectId).catch((error: unknown) => {
    log.warn("update URL was not written to app.json", { projectId, sandboxId: sandbox.sandboxId, error });
  });
}

/**
 * Creates a project owned by `ownerId`: by default a sandbox seeded from `templates/app` (a git
 * repository whose app.json points expo-updates at the project) with its app dev server
 * running, then the project row recording the sandbox and preview URL. Nothing is left
 * half-made: on any failure the sandbox is killed and the row (if already written) deleted. With `sandbox: false` the sandbox is created on
 * first use instead (see {@link ensureProjectSandbox}).
 */
export async function createProject(
  db: SqlExecutor,
  ownerId: string,
  name: string,
  options: { sandbox?: boolean } = {},
): Promise<Project> {
  if (options.sandbox === false) return insertProject(db, { ownerId, name });
  const { sandbox, previewUrl } = await createRunningSandbox();
  let projectId: string | undefined;
  try {
    const project = await insertProject(db, { ownerId, name });
    projectId = project.id;
    await pointNewAppAtUpdates(sandbox, project.id);
    await updateProjectSandbox(db, project.id, { sandboxId: sandbox.sandboxId, previewUrl });
    // Read back rather than patch the insert's row: the update moved `updatedAt`.
    const stored = await getProject(db, project.id);
    if (!stored) throw new Error(`Project ${project.id} vanished while it was being created.`);
    return stored;
  } catch (error) {
    // Cleanup failures are logged; the caller learns about the original failure.
    const cleanups = [getSandboxProvider().kill(sandbox.sandboxId), projectId ? deleteProject(db, projectId) : undefined];
    for (const outcome of await Promise.allSettled(cleanups)) {
      if (outcome.status === "rejected") {
        log.warn("cleanup after a failed project creation failed", { sandboxId: sandbox.sandboxId, projectId, error: outcome.reason });
      }
    }
    throw error;
  }
}

/**
 * How a caller above lib/projects opens a project's sandbox for work: the sandbox, created on
 * first use, with whatever a new one must get (the composition in lib/workspace). Rooms below
 * that composition take it as a parameter instead of importing it.
 */
export type OpenProjectSandbox = (project: Project) => Promise<Sandbox>;

/**
 * The project's sandbox, created on first use for a project that has none yet, and created anew
 * for one whose sandbox is gone (killed, or lost with the machine); `created` says whether it is
 * new. When two requests race, the first recorded sandbox wins and the other is killed.
 */
export async function ensureProjectSandbox(db: SqlExecutor, project: Project): Promise<{ sandbox: Sandbox; created: boolean }> {
  const provider = getSandboxProvider();
  if (project.sandboxId) {
    try {
      return { sandbox: await provider.connect(project.sandboxId), created: false };
    } catch (error) {
      if (!isSandboxError(error, SandboxNotFoundError)) throw error;
      log.warn("the project's sandbox is gone; starting a new one", { projectId: project.id, sandboxId: project.sandboxId });
    }
  }
  const { sandbox, previewUrl } = await createRunningSandbox();
  if (await claimProjectSandbox(db, project.id, project.sandboxId, { sandboxId: sandbox.sandboxId, previewUrl })) {
    await pointNewAppAtUpdates(sandbox, project.id);
    return { sandbox, created: true };
  }
  await provider.kill(sandbox.sandboxId);
  const winner = await getProject(db, project.id);
  if (!winner?.sandboxId) throw new NotFoundError(`Project ${project.id} was deleted while its sandbox was being created.`, "project_not_found");
  return { sandbox: await provider.connect(winner.sandboxId), created: false };
}

/** The client-visible shape of a project (spec 2.1 `backendProject`); never credentials. */
export function toProjectResponse(project: Project) {
  return {
    id: project.id,
    name: project.name,
    sandboxId: project.sandboxId,
    previewUrl: project.previewUrl,
    backendProject: project.backendProject,
    createdAt: project.createdAt.toISOString(),
    updatedAt: project.updatedAt.toISOString(),
  };
}

/** GET /api/projects: the user's projects. */
export const listUserProjects = async (ownerId: string): Promise<Project[]> => listProjects(await getStore(), ownerId);

/** POST /api/projects: {@link createProject} on the process-wide store. */
export const createUserProject = async (ownerId: string, name: string): Promise<Project> => createProject(await getStore(), ownerId, name);

/** PATCH /api/projects/<id>: the project under its new name (404 when it was deleted meanwhile). */
export async function renameOwnedProject(project: Project, name: string): Promise<Project> {
  const renamed = await renameProject(await getStore(), project.id, name);
  if (!renamed) throw new NotFoundError("Project not found.", "project_not_found");
  return renamed;
}
