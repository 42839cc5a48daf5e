import { uploadAssetFromRequest } from "@/lib/assets";
import { requireUser } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Multipart `file` + `projectId` → `{ blobUrl, pathname, filename, contentType, size }`; owner only. */
export const POST = route(async (request) => {
  // Authenticate before reading a byte of the body.
  const user = await requireUser(request);
  return Response.json(await uploadAssetFromRequest(request, user, openProjectSandbox));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
