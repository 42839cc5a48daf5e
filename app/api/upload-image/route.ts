import { requireUser } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { uploadChatImageFromRequest } from "@/lib/images";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Multipart `file` (an image) → `{ url, pathname, contentType }`; any signed-in user. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  return Response.json(await uploadChatImageFromRequest(request, user));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
