import { projectIdBody } from "@/lib/api-contract/schemas";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { enableCloudBackend, requireManagedSettings } from "@/lib/cloud/enable";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { mirrorProjectRepository } from "@/lib/repository-mirror";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = await parseJsonBody(request, projectIdBody);
  requireManagedSettings();
  const project = await requireOwnedProject(user, projectId);
  const state = await enableCloudBackend(project, openProjectSandbox);
  // The enabled app is saved off the sandbox; a failed mirror is recorded and enable still succeeds.
  await mirrorProjectRepository(await openProjectSandbox(project), project.id);
  // `completedSandboxSteps` only when enable had to finish the sandbox of a connected project.
  const { deploymentUrl, completedSandboxSteps, warningMessage } = state;
  return Response.json({
    success: true,
    deploymentUrl,
    ...(completedSandboxSteps && { completedSandboxSteps, ...(warningMessage && { warningMessage }) }),
  });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
