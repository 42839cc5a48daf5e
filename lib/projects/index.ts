import { log } from "@/lib/log";
import { APP_TEMPLATE, getSandboxProvider, startAppDevServer } from "@/lib/sandbox";
import type { SqlExecutor } from "@/lib/store";
import { deleteProject, getProject, insertProject, updateProjectSandbox, type Project } from "@/lib/store/projects";

/**
 * Creates a project owned by `ownerId`: a sandbox seeded from `templates/app` (a git repository
 * with one commit) with its app dev server running, then the project row recording the sandbox
 * and preview URL. Nothing is left half-made: on any failure the sandbox is killed and the row
 * (if already written) deleted.
 */
export async function createProject(db: SqlExecutor, ownerId: string, name: string): Promise<Project> {
  const provider = getSandboxProvider();
  const sandbox = await provider.create({ template: APP_TEMPLATE });
  let projectId: string | undefined;
  try {
    const { previewUrl } = await startAppDevServer(sandbox);
    const project = await insertProject(db, { ownerId, name });
    projectId = project.id;
    await updateProjectSandbox(db, project.id, { sandboxId: sandbox.sandboxId, previewUrl });
    // Read back rather than patch the insert's row: the update moved `updatedAt`.
    const stored = await getProject(db, project.id);
    if (!stored) throw new Error(`Project ${project.id} vanished while it was being created.`);
    return stored;
  } catch (error) {
    // Cleanup failures are logged; the caller learns about the original failure.
    const cleanups = [provider.kill(sandbox.sandboxId), projectId ? deleteProject(db, projectId) : undefined];
    for (const outcome of await Promise.allSettled(cleanups)) {
      if (outcome.status === "rejected") {
        log.warn("cleanup after a failed project creation failed", { sandboxId: sandbox.sandboxId, projectId, error: outcome.reason });
      }
    }
    throw error;
  }
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
