import { projectIdBody } from "@/lib/api-contract/schemas";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { connectManagedBackend, requireManagedSettings } from "@/lib/cloud/enable";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/** POST /api/backend/managed/connect: provisions a managed backend without touching the sandbox. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = await parseJsonBody(request, projectIdBody);
  requireManagedSettings();
  const project = await requireOwnedProject(user, projectId);
  const state = await connectManagedBackend(project);
  return Response.json({
    success: true,
    deploymentUrl: state.deploymentUrl,
    deploymentName: state.deploymentName,
    projectSlug: state.projectSlug,
    teamSlug: state.teamSlug,
  });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
