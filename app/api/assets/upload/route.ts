import { formSourceOfRequest, uploadAsset } from "@/lib/assets";
import { requireUser } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Multipart `file` + `projectId` → `{ blobUrl, pathname, filename, contentType, size }`; owner only.
 * `npm start` answers this path on the custom server's fast path (lib/fast-paths), with the same lib call.
 */
export const POST = route(async (request) => {
  // Authenticate before reading a byte of the body.
  const user = await requireUser(request);
  return Response.json(await uploadAsset(formSourceOfRequest(request), user, openProjectSandbox));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
