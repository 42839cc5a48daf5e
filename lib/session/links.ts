import crypto from "node:crypto";
import { hashApiToken } from "@/lib/auth";
import type { SqlExecutor } from "@/lib/store";

/** Where a sign-in link points (app/signin/link/route.ts). */
export const SIGNIN_LINK_PATH = "/signin/link";

/** How long a printed link stays usable. */
export const SIGNIN_LINK_TTL_MS = 60 * 60 * 1000;

const LINK_TOKEN_PREFIX = "cbsl_";

export interface SignInLink {
  /** Absolute URL to open in a browser; contains the plain one-time token. */
  url: string;
  expiresAt: Date;
}

export interface CreateSignInLinkOptions {
  /** Public address of the service, without a trailing slash. */
  baseUrl: string;
  /** @default SIGNIN_LINK_TTL_MS */
  ttlMs?: number;
}

/**
 * Creates a one-time sign-in link for a user. Only the token's SHA-256 digest is stored, so the
 * returned URL is the only place the token exists. Expired and used links are purged here.
 */
export async function createSignInLink(db: SqlExecutor, userId: string, options: CreateSignInLinkOptions): Promise<SignInLink> {
  const token = LINK_TOKEN_PREFIX + crypto.randomBytes(32).toString("base64url");
  const ttlMs = options.ttlMs ?? SIGNIN_LINK_TTL_MS;
  await db.query("delete from signin_links where used_at is not null or expires_at < now()");
  const { rows } = await db.query<{ expires_at: Date }>(
    `insert into signin_links (token_hash, user_id, expires_at)
     values ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
     returning expires_at`,
    [hashApiToken(token), userId, ttlMs],
  );
  const url = new URL(SIGNIN_LINK_PATH, `${options.baseUrl}/`);
  url.searchParams.set("token", token);
  return { url: url.toString(), expiresAt: rows[0].expires_at };
}

/**
 * Whether a sign-in link token would redeem now, without using it up: what the page a link opens
 * (GET, which link previewers also send) checks before it shows its "Sign in" button.
 */
export async function isSignInLinkUsable(db: SqlExecutor, token: string): Promise<boolean> {
  if (!token.startsWith(LINK_TOKEN_PREFIX)) return false;
  const { rows } = await db.query(
    "select 1 from signin_links where token_hash = $1 and used_at is null and expires_at > now()",
    [hashApiToken(token)],
  );
  return rows.length > 0;
}

/**
 * Consumes a sign-in link token: the user id when the link exists, is unused and has not
 * expired; null otherwise. A single UPDATE marks it used, so two concurrent redemptions of one
 * link cannot both succeed.
 */
export async function redeemSignInLink(db: SqlExecutor, token: string): Promise<string | null> {
  if (!token.startsWith(LINK_TOKEN_PREFIX)) return null;
  const { rows } = await db.query<{ user_id: string }>(
    `update signin_links set used_at = now()
     where token_hash = $1 and used_at is null and expires_at > now()
     returning user_id`,
    [hashApiToken(token)],
  );
  return rows[0]?.user_id ?? null;
}
