import { generateApiToken, hashApiToken, SESSION_COOKIE } from "@/lib/auth";
import type { Config } from "@/lib/config";
import type { SqlExecutor } from "@/lib/store";
import { insertApiToken } from "@/lib/store/users";

/** Label of the API tokens minted for dashboard sessions; sign-out deletes only these. */
export const SESSION_TOKEN_LABEL = "dashboard-session";

/** Browsers keep the session cookie this long. */
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 60 * 60;

/**
 * Mints the API token a dashboard session carries in its cookie. Sessions get their own token,
 * even when the user signed in by pasting one, so signing out never revokes the user's own
 * API tokens.
 */
export async function startSession(db: SqlExecutor, userId: string): Promise<string> {
  const token = generateApiToken();
  await insertApiToken(db, { userId, tokenHash: hashApiToken(token), label: SESSION_TOKEN_LABEL });
  return token;
}

/** Revokes a session token; tokens that are not dashboard sessions are left alone. */
export async function endSession(db: SqlExecutor, token: string): Promise<void> {
  await db.query("delete from api_tokens where token_hash = $1 and label = $2", [hashApiToken(token), SESSION_TOKEN_LABEL]);
}

/** Attributes of the session cookie: unreadable by scripts, not sent on cross-site posts. */
export function sessionCookie(token: string, config: Pick<Config, "PUBLIC_BASE_URL">) {
  return {
    name: SESSION_COOKIE,
    value: token,
    httpOnly: true,
    sameSite: "lax" as const,
    secure: config.PUBLIC_BASE_URL.startsWith("https:"),
    path: "/",
    maxAge: SESSION_MAX_AGE_SECONDS,
  };
}
