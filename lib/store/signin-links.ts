import type { SqlExecutor } from "./port";

/** Deletes used and expired sign-in links. */
export async function purgeDeadSignInLinks(db: SqlExecutor): Promise<void> {
  await db.query("delete from signin_links where used_at is not null or expires_at < now()");
}

/** Stores a sign-in link by the digest of its token; returns when it expires. */
export async function insertSignInLink(db: SqlExecutor, input: { tokenHash: string; userId: string; ttlMs: number }): Promise<Date> {
  const { rows } = await db.query<{ expires_at: Date }>(
    `insert into signin_links (token_hash, user_id, expires_at)
     values ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
     returning expires_at`,
    [input.tokenHash, input.userId, input.ttlMs],
  );
  return rows[0].expires_at;
}

/** Whether the link with this digest exists, is unused and has not expired. */
export async function isSignInLinkLive(db: SqlExecutor, tokenHash: string): Promise<boolean> {
  const { rows } = await db.query("select 1 from signin_links where token_hash = $1 and used_at is null and expires_at > now()", [tokenHash]);
  return rows.length > 0;
}

/**
 * Marks the live link with this digest used and returns its user id; null when there is none.
 * A single UPDATE, so of two concurrent redemptions of one link only one gets it.
 */
export async function consumeSignInLink(db: SqlExecutor, tokenHash: string): Promise<string | null> {
  const { rows } = await db.query<{ user_id: string }>(
    `update signin_links set used_at = now()
     where token_hash = $1 and used_at is null and expires_at > now()
     returning user_id`,
    [tokenHash],
  );
  return rows[0]?.user_id ?? null;
}
