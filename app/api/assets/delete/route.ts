import { deleteAssetBody } from "@/lib/api-contract/schemas";
import { deleteAssetOfProject } from "@/lib/assets";
import { requireUser } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `{ projectId, filename }` → `{ success: true }`; an unknown asset is a 404. */
export const DELETE = route(async (request) => {
  const user = await requireUser(request);
  const { projectId, filename } = await parseJsonBody(request, deleteAssetBody);
  await deleteAssetOfProject(user, projectId, filename, openProjectSandbox);
  return Response.json({ success: true });
});

export const { GET, HEAD, POST, PUT, PATCH } = methodNotAllowed(["DELETE"]);
