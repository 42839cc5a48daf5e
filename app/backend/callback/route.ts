import { z } from "zod";
import { authenticate } from "@/lib/auth";
import { completeOAuthConnect } from "@/lib/cloud/oauth";
import { UnauthorizedError } from "@/lib/errors";
import { isCrossSiteNavigation, parseQuery, reenterResponse, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

const callbackQuery = z
  .object({ state: z.string().min(1), code: z.string().min(1).optional(), error: z.string().min(1).optional() })
  .refine((query) => query.code !== undefined || query.error !== undefined, "code or error is required");

/**
 * GET /backend/callback?code&state (or ?error&state): the OAuth redirect target. An invalid state
 * answers 400 and changes nothing; otherwise 302 to the project's dashboard page. The consent
 * page's redirect is a navigation from another site, which brings no SameSite=Strict session
 * cookie: such an arrival re-enters once from a page of ours to get it.
 */
export const GET = route(async (request) => {
  const user = await authenticate(request);
  if (!user) {
    if (isCrossSiteNavigation(request)) return reenterResponse(request.url);
    throw new UnauthorizedError();
  }
  const query = parseQuery(request, callbackQuery);
  const dashboardUrl = await completeOAuthConnect(user.id, query, openProjectSandbox);
  return new Response(null, { status: 302, headers: { location: dashboardUrl, "cache-control": "no-store" } });
});
