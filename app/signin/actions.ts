"use server";

import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { authenticate, EmailInUseError, SESSION_COOKIE } from "@/lib/auth";
import { getConfig } from "@/lib/config";
import { endAllSessions, endSession, sessionCookie, signInWithLinkToken, startSession } from "@/lib/session";
import { getSessionUser } from "@/lib/session/current";
import { getStore } from "@/lib/store";

// Server functions are POSTs that Next.js itself refuses unless their Origin matches the host,
// so they need no CSRF check of their own (lib/auth checks the API's cookie requests).

/**
 * Form action of the sign-in page: accepts a pasted API token (or Supabase access token), checks
 * it the way the API does, and starts a session with a token of its own, replacing the
 * browser's previous session.
 */
export async function signInWithToken(formData: FormData): Promise<void> {
  const pasted = String(formData.get("token") ?? "").trim();
  const config = getConfig();
  const user = pasted
    ? await authenticate(new Request(config.PUBLIC_BASE_URL, { headers: { authorization: `Bearer ${pasted}` } })).catch((error: unknown) => {
        if (error instanceof EmailInUseError) redirect("/signin?error=email");
        throw error;
      })
    : null;
  if (!user) redirect("/signin?error=token");
  const jar = await cookies();
  jar.set(sessionCookie(await startSession(await getStore(), user.id, config, { replacing: jar.get(SESSION_COOKIE)?.value }), config));
  redirect("/projects");
}

/**
 * The "Sign in" button of the page a one-time link opens: only this POST uses the link up, so a
 * link previewer fetching the URL leaves it working.
 */
export async function signInWithLink(formData: FormData): Promise<void> {
  const config = getConfig();
  const jar = await cookies();
  const session = await signInWithLinkToken(await getStore(), String(formData.get("token") ?? ""), config, jar.get(SESSION_COOKIE)?.value);
  if (!session) redirect("/signin?error=link");
  jar.set(sessionCookie(session, config));
  redirect("/projects");
}

/** Ends the dashboard session: revokes its token and clears the cookie. */
export async function signOut(): Promise<void> {
  const jar = await cookies();
  const token = jar.get(SESSION_COOKIE)?.value;
  if (token) await endSession(await getStore(), token);
  jar.delete(SESSION_COOKIE);
  redirect("/signin");
}

/** Ends every dashboard session of the signed-in user, on every browser; their API tokens keep working. */
export async function signOutEverywhere(): Promise<void> {
  const user = await getSessionUser();
  if (user) await endAllSessions(await getStore(), user.id);
  (await cookies()).delete(SESSION_COOKIE);
  redirect("/signin");
}
