import { projectIdBody } from "@/lib/api-contract/schemas";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { startProjectBackendDevServer } from "@/lib/cloud/restore";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

/** Starts (or restarts, attached to the error scanner) the project's backend dev server. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = await parseJsonBody(request, projectIdBody);
  const project = await requireOwnedProject(user, projectId);
  return Response.json({ success: await startProjectBackendDevServer(project, openProjectSandbox) });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
