import { z } from "zod";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { startOAuthConnect } from "@/lib/cloud/oauth";
import { parseQuery, route } from "@/lib/http";

export const dynamic = "force-dynamic";

const connectQuery = z.object({ projectId: z.string().min(1) });

/** GET /backend/connect?projectId=: starts the OAuth flow (302 to the backend's consent page). */
export const GET = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = parseQuery(request, connectQuery);
  const project = await requireOwnedProject(user, projectId);
  const authorizeUrl = await startOAuthConnect(user.id, project);
  return new Response(null, { status: 302, headers: { location: authorizeUrl, "cache-control": "no-store" } });
});
