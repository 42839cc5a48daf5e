import { requireUser } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { formSourceOfRequest } from "@/lib/assets";
import { uploadChatImage } from "@/lib/images";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Multipart `file` (an image) → `{ url, pathname, contentType }`; any signed-in user. `npm start`
 * answers this path on the custom server's fast path (lib/fast-paths), with the same lib call.
 */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  return Response.json(await uploadChatImage(formSourceOfRequest(request), user));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
