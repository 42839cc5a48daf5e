import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { errorChannel, getRealtime } from "@/lib/realtime";
import { createSseResponse } from "@/lib/realtime/sse";

export const dynamic = "force-dynamic";

/** Server-Sent Events with the project's `error-notification` events; owner only. */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return createSseResponse({
    realtime: getRealtime(),
    channel: errorChannel(project.id),
    signal: request.signal,
    lastEventId: request.headers.get("last-event-id"),
  });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
