import Link from "next/link";
import { signOut, signOutEverywhere } from "@/app/signin/actions";

/** Top bar of the signed-in dashboard: product name, the user, sign-out (this browser or every one). */
export function SiteHeader({ userName }: { userName: string }) {
  return (
    <header className="site-header">
      <Link href="/projects" className="brand">
        Cloud backend
      </Link>
      <form action={signOut} className="row">
        <span className="muted">{userName}</span>
        <button type="submit" className="link-button">
          Sign out
        </button>
        <button type="submit" formAction={signOutEverywhere} className="link-button">
          Sign out everywhere
        </button>
      </form>
    </header>
  );
}
