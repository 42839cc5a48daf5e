import Link from "next/link";
import { signOut } from "@/app/signin/actions";

/** Top bar of the signed-in dashboard: product name, the user, sign-out. */
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
      </form>
    </header>
  );
}
