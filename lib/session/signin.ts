import type { SqlExecutor } from "@/lib/store";
import { redeemSignInLink } from "./links";
import { startSession, type SessionConfig } from "./sessions";

/**
 * Uses up a one-time sign-in link and starts a session for its user: the new session token, or
 * null when the link is used, expired or unknown. `presentedSession` is the session cookie the
 * browser already had; it is revoked, so every sign-in leaves exactly one live cookie behind.
 */
export async function signInWithLinkToken(
  db: SqlExecutor,
  linkToken: string,
  config: SessionConfig,
  presentedSession?: string | null,
): Promise<string | null> {
  const userId = await redeemSignInLink(db, linkToken);
  return userId ? startSession(db, userId, config, { replacing: presentedSession }) : null;
}
