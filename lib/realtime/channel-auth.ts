import { z } from "zod";
import { BadRequestError } from "@/lib/errors";
import { JSON_BODY_LIMIT_BYTES, readTextWithin } from "@/lib/http";
import { RealtimeNotConfiguredError } from "./errors";
import type { ChannelAuthorization, Realtime } from "./port";

/** pusher-js posts `socket_id` (Pusher's `<digits>.<digits>`) and `channel_name`, form-encoded. */
const channelAuthorizationRequest = z.object({
  socket_id: z.string().regex(/^\d+\.\d+$/, "must be a Pusher socket id"),
  channel_name: z.string().min(1).max(200),
});

/**
 * Reads pusher-js's form-encoded authorization request.
 * @throws BadRequestError on another content type or a wrong shape
 */
export async function parseChannelAuthorizationRequest(request: Request): Promise<{ socketId: string; channel: string }> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    throw new BadRequestError("Send socket_id and channel_name as application/x-www-form-urlencoded.", "invalid_content_type");
  }
  const result = channelAuthorizationRequest.safeParse(Object.fromEntries(new URLSearchParams(await readTextWithin(request, JSON_BODY_LIMIT_BYTES))));
  if (!result.success) throw new BadRequestError(result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
  return { socketId: result.data.socket_id, channel: result.data.channel_name };
}

/**
 * Signs a client's join of `channel`; the caller has checked that it may read the channel.
 * @throws RealtimeNotConfiguredError when the driver has no browser clients to authorize (memory)
 */
export async function authorizeChannel(realtime: Realtime, socketId: string, channel: string): Promise<ChannelAuthorization> {
  if (!realtime.authorizeChannel) {
    throw new RealtimeNotConfiguredError(`The ${realtime.name} realtime driver has no private channels to join; read the project's errors/stream instead.`);
  }
  return realtime.authorizeChannel(socketId, channel);
}
