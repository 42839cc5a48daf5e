import type { Config } from "@/lib/config";
import type { SqlExecutor } from "@/lib/store";
import { findFirstTokenOwner } from "@/lib/store/users";
import { createSignInLink } from "./links";

/** Label lib/auth/seed.ts gives the demo user's API token; it identifies the demo user. */
const DEMO_TOKEN_LABEL = "demo";

/**
 * Prints a fresh one-time dashboard sign-in link for the demo user (embedded default). Printed on
 * every start, since a link is single-use and expires; nothing is printed when there is no demo
 * user. Returns the printed URL (tests read it), or null.
 */
export async function announceSignInLink(db: SqlExecutor, config: Pick<Config, "PUBLIC_BASE_URL">): Promise<string | null> {
  const userId = await findFirstTokenOwner(db, DEMO_TOKEN_LABEL);
  if (!userId) return null;
  const link = await createSignInLink(db, userId, { baseUrl: config.PUBLIC_BASE_URL });
  const minutes = Math.round((link.expiresAt.getTime() - Date.now()) / 60_000);
  // Deliberately unredacted, like the seed token: the link is stored hashed and shown only now.
  console.log(`\n  Dashboard sign-in link for the demo user (works once, for ${minutes} min):\n    ${link.url}\n`);
  return link.url;
}
