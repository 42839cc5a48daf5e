import crypto from "node:crypto";

const TOKEN_PREFIX = "cbs_";

/** A new API token: 32 random bytes, prefixed so leaked tokens are easy to recognise. */
export function generateApiToken(): string {
  return TOKEN_PREFIX + crypto.randomBytes(32).toString("base64url");
}

/** Tokens are stored as SHA-256 hex digests; high-entropy tokens need no slow hash. */
export function hashApiToken(token: string): string {
  return crypto.createHash("sha256").update(token, "utf8").digest("hex");
}
