import { redirect } from "next/navigation";
import { getSessionUser } from "@/lib/session/current";
import { signInWithToken } from "./actions";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · Cloud backend service" };

const ERRORS: Record<string, string> = {
  link: "That sign-in link was already used or has expired. Restart the server for a new one, or paste a token.",
  token: "That token is not valid.",
  email: "Another account of this service already uses that Supabase account's email address. Sign in with that account's API token.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  if (await getSessionUser()) redirect("/projects");
  const error = (await searchParams).error;
  const message = typeof error === "string" ? ERRORS[error] : undefined;

  return (
    <main className="narrow">
      <h1>Sign in</h1>
      <p className="muted">
        On the embedded setup, open the one-time sign-in link the server printed when it started. Or paste an API
        token:
      </p>
      {message && (
        <p className="alert" role="alert">
          {message}
        </p>
      )}
      <form action={signInWithToken} className="stack">
        <label htmlFor="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" placeholder="cbs_…" required />
        <button type="submit" className="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
