import { requireOwnedProject, requireUser } from "@/lib/auth";
import { NotFoundError } from "@/lib/errors";
import { methodNotAllowed, route } from "@/lib/http";
import { authorizeChannel, getRealtime, parseChannelAuthorizationRequest, projectIdOfErrorChannel } from "@/lib/realtime";

export const dynamic = "force-dynamic";

/**
 * Pusher channel authorization for pusher-js (a form POST of `socket_id` and `channel_name`):
 * signs the join of `private-<project_id>-errors` for the project's owner only. Unauthenticated
 * → 401; any other channel, or a project of someone else → 404.
 */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { socketId, channel } = await parseChannelAuthorizationRequest(request);
  const projectId = projectIdOfErrorChannel(channel);
  if (!projectId) throw new NotFoundError("No such channel.", "channel_not_found");
  await requireOwnedProject(user, projectId);
  return Response.json(await authorizeChannel(getRealtime(), socketId, channel));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
