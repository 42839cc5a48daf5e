import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { listProjectErrorNotifications } from "@/lib/realtime/error-notifications";

export const dynamic = "force-dynamic";

/** The project's stored error notifications (the last 200), oldest first; owner only. */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json({ notifications: await listProjectErrorNotifications(project.id) });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
