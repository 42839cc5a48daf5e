import { z } from "zod";
import { requireUser } from "@/lib/auth";
import { completeOAuthConnect } from "@/lib/cloud/oauth";
import { parseQuery, route } from "@/lib/http";

export const dynamic = "force-dynamic";

const callbackQuery = z
  .object({ state: z.string().min(1), code: z.string().min(1).optional(), error: z.string().min(1).optional() })
  .refine((query) => query.code !== undefined || query.error !== undefined, "code or error is required");

/**
 * GET /backend/callback?code&state (or ?error&state): the OAuth redirect target. An invalid state
 * answers 400 and changes nothing; otherwise 302 to the project's dashboard page.
 */
export const GET = route(async (request) => {
  const user = await requireUser(request);
  const query = parseQuery(request, callbackQuery);
  const dashboardUrl = await completeOAuthConnect(user.id, query);
  return new Response(null, { status: 302, headers: { location: dashboardUrl, "cache-control": "no-store" } });
});
