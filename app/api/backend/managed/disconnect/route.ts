import { disconnectBody } from "@/lib/api-contract/schemas";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { disconnectBackend } from "@/lib/cloud/disconnect";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/** POST /api/backend/managed/disconnect: stops the backend dev server, removes credentials, clears the state. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { projectId, deleteBackendProject } = await parseJsonBody(request, disconnectBody);
  const project = await requireOwnedProject(user, projectId);
  await disconnectBackend(project, { deleteBackendProject });
  return Response.json({ success: true });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
