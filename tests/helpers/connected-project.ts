import type { SqlExecutor } from "@/lib/store";
import { upsertCredentials } from "@/lib/store/credentials";
import { insertProject, type Project, updateProjectSandbox } from "@/lib/store/projects";

/**
 * A project of `ownerId` whose sandbox is `sandboxId` and whose backend is connected (managed
 * credentials of a made-up deployment), straight in the store: for tests and benches of what
 * runs once a backend is enabled, without an enable.
 */
export async function insertConnectedProject(db: SqlExecutor, ownerId: string, sandboxId: string, name = "Chat app"): Promise<Project> {
  const project = await insertProject(db, { ownerId, name });
  await updateProjectSandbox(db, project.id, { sandboxId, previewUrl: null });
  await upsertCredentials(db, {
    projectId: project.id,
    userId: ownerId,
    mode: "managed",
    teamSlug: "team",
    projectSlug: "chat-app",
    deploymentUrl: "https://happy-animal-123.convex.cloud",
    deploymentName: "happy-animal-123",
    adminKey: "prod:happy-animal-123|secret",
    accessToken: null,
    backendProjectId: 1,
  });
  return project;
}
