import { generateApiToken, hashApiToken, SESSION_COOKIE } from "@/lib/auth";
import type { Config } from "@/lib/config";
import type { SqlExecutor } from "@/lib/store";
import { deleteApiTokensWithLabel, deleteApiTokenWithLabel, deleteDeadApiTokens, insertApiToken } from "@/lib/store/users";

/** Label of the API tokens minted for dashboard sessions; sign-out deletes only these. */
export const SESSION_TOKEN_LABEL = "dashboard-session";

export type SessionConfig = Pick<Config, "SESSION_MAX_AGE_HOURS" | "SESSION_IDLE_MINUTES">;

export interface StartSessionOptions {
  /** The session cookie the browser presented at sign-in, if any: it is revoked (rotation). */
  replacing?: string | null;
}

/**
 * Mints the API token a dashboard session carries in its cookie, with the server-side lifetime
 * of `config` (absolute and idle). Sessions get their own token, even when the user signed in by
 * pasting one, so signing out never revokes the user's own API tokens. Each sign-in gets a new
 * token; the one it replaces stops working, and the user's dead sessions are purged.
 */
export async function startSession(db: SqlExecutor, userId: string, config: SessionConfig, options: StartSessionOptions = {}): Promise<string> {
  if (options.replacing) await endSession(db, options.replacing);
  await deleteDeadApiTokens(db, userId, SESSION_TOKEN_LABEL);
  const token = generateApiToken();
  await insertApiToken(db, {
    userId,
    tokenHash: hashApiToken(token),
    label: SESSION_TOKEN_LABEL,
    maxAgeSeconds: config.SESSION_MAX_AGE_HOURS * 3600,
    idleTimeoutSeconds: config.SESSION_IDLE_MINUTES * 60,
  });
  return token;
}

/** Revokes a session token; tokens that are not dashboard sessions are left alone. */
export async function endSession(db: SqlExecutor, token: string): Promise<void> {
  await deleteApiTokenWithLabel(db, hashApiToken(token), SESSION_TOKEN_LABEL);
}

/** Revokes every dashboard session of the user ("sign out everywhere"); API tokens stay. Returns how many ended. */
export async function endAllSessions(db: SqlExecutor, userId: string): Promise<number> {
  return deleteApiTokensWithLabel(db, userId, SESSION_TOKEN_LABEL);
}

/**
 * Attributes of the session cookie: unreadable by scripts, and SameSite=Strict, so the browser
 * sends it on no request another site starts, not even a link. The one flow that arrives from
 * another site, the OAuth callback, re-enters from a page of its own (app/backend/callback).
 */
export function sessionCookie(token: string, config: Pick<Config, "PUBLIC_BASE_URL"> & SessionConfig) {
  return {
    name: SESSION_COOKIE,
    value: token,
    httpOnly: true,
    sameSite: "strict" as const,
    secure: config.PUBLIC_BASE_URL.startsWith("https:"),
    path: "/",
    maxAge: config.SESSION_MAX_AGE_HOURS * 3600,
  };
}
