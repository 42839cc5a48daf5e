import { requireProjectOwner } from "@/lib/auth";
import { checkBackend } from "@/lib/cloud/check";
import { methodNotAllowed, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

/** Whether the backend code now in the sandbox pushes, with the backend's unresolved errors. */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(await checkBackend(project, openProjectSandbox));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
