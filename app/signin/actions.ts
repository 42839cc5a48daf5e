"use server";

import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { authenticate, SESSION_COOKIE } from "@/lib/auth";
import { getConfig } from "@/lib/config";
import { endSession, sessionCookie, startSession } from "@/lib/session";
import { getStore } from "@/lib/store";

/**
 * Form action of the sign-in page: accepts a pasted API token (or Supabase access token), checks
 * it the way the API does, and starts a session with a token of its own.
 */
export async function signInWithToken(formData: FormData): Promise<void> {
  const pasted = String(formData.get("token") ?? "").trim();
  const config = getConfig();
  const user = pasted
    ? await authenticate(new Request(config.PUBLIC_BASE_URL, { headers: { authorization: `Bearer ${pasted}` } }))
    : null;
  if (!user) redirect("/signin?error=token");
  (await cookies()).set(sessionCookie(await startSession(await getStore(), user.id), config));
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
