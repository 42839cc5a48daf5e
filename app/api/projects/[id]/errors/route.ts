import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { listStoredErrorNotifications } from "@/lib/realtime/error-notifications";
import { getStore } from "@/lib/store";

export const dynamic = "force-dynamic";

/** The project's stored error notifications (the last 200), oldest first; owner only. */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json({ notifications: await listStoredErrorNotifications(await getStore(), project.id) });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
