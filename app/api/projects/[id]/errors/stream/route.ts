import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { streamProjectErrorNotifications } from "@/lib/realtime/error-notifications";

export const dynamic = "force-dynamic";

/**
 * Server-Sent Events with the project's `error-notification` events, with every realtime driver;
 * owner only. The stored history is replayed first: all of it, or what follows `Last-Event-ID`.
 * The stream ends at shutdown; the client resumes on another instance with `Last-Event-ID`.
 */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return streamProjectErrorNotifications(project.id, request);
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
