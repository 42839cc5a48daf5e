import type { SqlExecutor } from "./port";

/** One pending OAuth round trip: whose it is, for which project, and its encrypted PKCE verifier. */
export interface OAuthStateRow {
  nonceHash: string;
  userId: string;
  projectId: string;
  /** Ciphertext; only lib/cloud/oauth.ts can open it. */
  codeVerifier: string;
  expiresAt: Date;
}

/** Stores a new state, purging the expired ones first. */
export async function insertOAuthState(db: SqlExecutor, state: OAuthStateRow, now: Date): Promise<void> {
  await db.query("delete from oauth_states where expires_at <= $1", [now]);
  await db.query("insert into oauth_states (nonce_hash, user_id, project_id, code_verifier, expires_at) values ($1, $2, $3, $4, $5)", [
    state.nonceHash,
    state.userId,
    state.projectId,
    state.codeVerifier,
    state.expiresAt,
  ]);
}

/**
 * Deletes and answers the unexpired state of `userId` with this nonce digest; a single DELETE, so
 * of two concurrent callers only one gets it. Null when there is none.
 */
export async function takeOAuthState(
  db: SqlExecutor,
  nonceHash: string,
  userId: string,
  now: Date,
): Promise<{ projectId: string; codeVerifier: string } | null> {
  const { rows } = await db.query<{ project_id: string; code_verifier: string }>(
    "delete from oauth_states where nonce_hash = $1 and user_id = $2 and expires_at > $3 returning project_id, code_verifier",
    [nonceHash, userId, now],
  );
  return rows[0] ? { projectId: rows[0].project_id, codeVerifier: rows[0].code_verifier } : null;
}

/** Whether a state with this nonce digest is still stored (for any user). */
export async function oauthStateExists(db: SqlExecutor, nonceHash: string): Promise<boolean> {
  const { rows } = await db.query("select 1 from oauth_states where nonce_hash = $1", [nonceHash]);
  return rows.length > 0;
}
