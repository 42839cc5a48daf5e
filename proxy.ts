import { NextResponse, type NextRequest } from "next/server";
import { CrossSiteRequestError } from "@/lib/auth/errors";
import { errorResponse } from "@/lib/http";
import { isPercentDecodable, malformedPathResponse } from "@/lib/http/paths";

/**
 * Whether a server-action POST comes from another origin than the host it was sent to: Next.js
 * refuses those itself, but with a 500. An Origin that is not a URL (`null`) is another origin.
 */
function isCrossOriginServerAction(request: NextRequest): boolean {
  if (request.method !== "POST" || !request.headers.has("next-action")) return false;
  const origin = request.headers.get("origin");
  if (!origin) return false;
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  return URL.canParse(origin) ? new URL(origin).host !== host : true;
}

/**
 * Runs only for paths with a `%` and for server-action POSTs (see `config`), so no other request
 * pays for it and no upload body is buffered for it. Next.js answers a path it cannot
 * percent-decode, and a cross-origin server action, with a 500: these answer the JSON 400 and 403 first.
 */
export function proxy(request: NextRequest): Response {
  if (isCrossOriginServerAction(request)) return errorResponse(new CrossSiteRequestError());
  return isPercentDecodable(request.nextUrl.pathname) ? NextResponse.next() : malformedPathResponse();
}

export const config = { matcher: ["/(.*%.*)", { source: "/:path*", has: [{ type: "header", key: "next-action" }] }] };
