import { requireProjectOwner } from "@/lib/auth";
import { getConfig } from "@/lib/config";
import { methodNotAllowed, route } from "@/lib/http";
import { errorNotificationSource } from "@/lib/realtime/error-notifications";
import { createSseResponse } from "@/lib/realtime/sse";
import { shutdownSignal } from "@/lib/shutdown";
import { getStore } from "@/lib/store";

export const dynamic = "force-dynamic";

/**
 * Server-Sent Events with the project's `error-notification` events, with every realtime driver;
 * owner only. The stored history is replayed first: all of it, or what follows `Last-Event-ID`.
 * The stream ends at shutdown; the client resumes on another instance with `Last-Event-ID`.
 */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return createSseResponse({
    source: errorNotificationSource(await getStore(), project.id),
    signal: AbortSignal.any([request.signal, shutdownSignal()]),
    lastEventId: request.headers.get("last-event-id"),
    heartbeatMs: getConfig().SSE_HEARTBEAT_MS,
  });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
