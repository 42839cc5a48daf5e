import { projectIdQuery } from "@/lib/api-contract/schemas";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { backendStatusOf } from "@/lib/cloud/backend-status";
import { methodNotAllowed, parseQuery, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/** `{ backendProject, backendDevServer, backendPush, missingSandboxWiring }` of a project the caller owns. */
export const GET = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = parseQuery(request, projectIdQuery);
  const project = await requireOwnedProject(user, projectId);
  return Response.json(await backendStatusOf(project));
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
