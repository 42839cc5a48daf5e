import { requireProjectOwner } from "@/lib/auth";
import { connectProjectSandbox } from "@/lib/cloud/enable";
import { restartProjectSandbox } from "@/lib/cloud/restore";
import { methodNotAllowed, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/** Restarts the project's sandbox; the backend URL and dev servers are restored afterwards. */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const result = await restartProjectSandbox(await connectProjectSandbox(project), project);
  return Response.json({ success: true, ...result });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
