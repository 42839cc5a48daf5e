import { NextResponse } from "next/server";
import { getConfig } from "@/lib/config";
import { redeemSignInLink, sessionCookie, startSession } from "@/lib/session";
import { getStore } from "@/lib/store";

export const dynamic = "force-dynamic";

/**
 * Opens a one-time sign-in link (printed at start): consumes it, starts a dashboard session and
 * goes to the projects. A used, expired or unknown link goes back to the sign-in page.
 */
export async function GET(request: Request): Promise<Response> {
  const config = getConfig();
  const token = new URL(request.url).searchParams.get("token") ?? "";
  const db = await getStore();
  const userId = await redeemSignInLink(db, token);
  const target = new URL(userId ? "/projects" : "/signin?error=link", `${config.PUBLIC_BASE_URL}/`);
  const response = NextResponse.redirect(target, 303);
  // The link carries a token: keep it out of caches and of the Referer of the next page.
  response.headers.set("cache-control", "no-store");
  response.headers.set("referrer-policy", "no-referrer");
  if (userId) response.cookies.set(sessionCookie(await startSession(db, userId), config));
  return response;
}
