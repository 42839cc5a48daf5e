import crypto from "node:crypto";
import { hashApiToken } from "@/lib/auth";
import type { SqlExecutor } from "@/lib/store";
import { insertSignInLink, isSignInLinkLive, purgeDeadSignInLinks, consumeSignInLink } from "@/lib/store/signin-links";

/** Where a sign-in link points (app/signin/link/page.tsx). */
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
  await purgeDeadSignInLinks(db);
  const expiresAt = await insertSignInLink(db, { tokenHash: hashApiToken(token), userId, ttlMs: options.ttlMs ?? SIGNIN_LINK_TTL_MS });
  const url = new URL(SIGNIN_LINK_PATH, `${options.baseUrl}/`);
  url.searchParams.set("token", token);
  return { url: url.toString(), expiresAt };
}

/**
 * Whether a sign-in link token would redeem now, without using it up: what the page a link opens
 * (GET, which link previewers also send) checks before it shows its "Sign in" button.
 */
export async function isSignInLinkUsable(db: SqlExecutor, token: string): Promise<boolean> {
  return token.startsWith(LINK_TOKEN_PREFIX) && isSignInLinkLive(db, hashApiToken(token));
}

/**
 * Consumes a sign-in link token: the user id when the link exists, is unused and has not
 * expired; null otherwise. Two concurrent redemptions of one link cannot both succeed.
 */
export async function redeemSignInLink(db: SqlExecutor, token: string): Promise<string | null> {
  if (!token.startsWith(LINK_TOKEN_PREFIX)) return null;
  return consumeSignInLink(db, hashApiToken(token));
}
