import type { SqlExecutor } from "@/lib/store";
import { insertProject, type Project } from "@/lib/store/projects";

/** Creates a project owned by `ownerId`. */
export async function createProject(db: SqlExecutor, ownerId: string, name: string): Promise<Project> {
  return insertProject(db, { ownerId, name });
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
