import { NextResponse, type NextRequest } from "next/server";
import { isPercentDecodable, malformedPathResponse } from "@/lib/http/paths";

/**
 * Runs only for paths with a `%` (see `config`), so no other request pays for it and no upload
 * body is buffered for it. Next.js answers a path it cannot percent-decode with a plain-text 500;
 * this answers the JSON 400 first.
 */
export function proxy(request: NextRequest): Response {
  return isPercentDecodable(request.nextUrl.pathname) ? NextResponse.next() : malformedPathResponse();
}

export const config = { matcher: "/(.*%.*)" };
