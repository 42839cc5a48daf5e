import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { openProjectSandbox, restartProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

/** Restarts the project's sandbox; the backend URL and dev servers are restored afterwards. */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const result = await restartProjectSandbox(await openProjectSandbox(project), project);
  return Response.json({ success: true, ...result });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
