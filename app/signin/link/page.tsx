import { redirect } from "next/navigation";
import { isSignInLinkUsable } from "@/lib/session";
import { getStore } from "@/lib/store";
import { signInWithLink } from "../actions";

export const dynamic = "force-dynamic";
// The URL carries the one-time token: keep it out of the Referer of anything the page loads.
export const metadata = { title: "Sign in · Cloud backend service", referrer: "no-referrer" };

/**
 * The page a one-time sign-in link opens. Opening it changes nothing (link previewers open it
 * too); its "Sign in" button posts the token, which uses the link up and starts the session.
 */
export default async function SignInLinkPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const token = (await searchParams).token;
  if (typeof token !== "string" || !(await isSignInLinkUsable(await getStore(), token))) redirect("/signin?error=link");

  return (
    <main className="narrow">
      <h1>Sign in</h1>
      <p className="muted">This one-time link signs this browser in to the dashboard.</p>
      <form action={signInWithLink} className="stack">
        <input type="hidden" name="token" value={token} />
        <button type="submit" className="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
