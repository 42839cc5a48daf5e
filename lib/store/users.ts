import { isUuid } from "./ids";
import type { SqlExecutor } from "./port";

export interface User {
  id: string;
  email: string | null;
  name: string;
  createdAt: Date;
}

interface UserRow {
  id: string;
  email: string | null;
  name: string;
  created_at: Date;
}

const toUser = (row: UserRow): User => ({ id: row.id, email: row.email, name: row.name, createdAt: row.created_at });

export async function insertUser(db: SqlExecutor, input: { id?: string; email?: string | null; name: string }): Promise<User> {
  const { rows } = await db.query<UserRow>(
    "insert into users (id, email, name) values (coalesce($1::uuid, gen_random_uuid()), $2, $3) returning *",
    [input.id ?? null, input.email ?? null, input.name],
  );
  return toUser(rows[0]);
}

export async function getUser(db: SqlExecutor, id: string): Promise<User | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<UserRow>("select * from users where id = $1", [id]);
  return rows[0] ? toUser(rows[0]) : null;
}

/**
 * The user with this id, created when it does not exist yet (external identities such as Supabase
 * Auth); an existing user without an email gets this one. Null when the email already belongs to
 * another user: the row is then left alone.
 */
export async function ensureUser(db: SqlExecutor, input: { id: string; email: string | null; name: string }): Promise<User | null> {
  const { rows } = await db.query<UserRow>(
    `insert into users (id, email, name)
     select $1, $2, $3 where not exists (select 1 from users where email = $2 and id <> $1)
     on conflict (id) do update set email = coalesce(users.email, excluded.email)
     returning *`,
    [input.id, input.email, input.name],
  );
  return rows[0] ? toUser(rows[0]) : getUser(db, input.id);
}

export async function countUsers(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ count: number }>("select count(*)::int as count from users");
  return rows[0].count;
}

export interface NewApiToken {
  userId: string;
  /** SHA-256 hex digest of the token; the token itself is never stored. */
  tokenHash: string;
  label: string;
  /** The token stops working this long after it is created. @default never */
  maxAgeSeconds?: number;
  /** The token stops working this long after its last use. @default never */
  idleTimeoutSeconds?: number;
}

/** Stores the SHA-256 digest of a new API token. */
export async function insertApiToken(db: SqlExecutor, input: NewApiToken): Promise<void> {
  await db.query(
    `insert into api_tokens (user_id, token_hash, label, max_age_seconds, idle_timeout_seconds)
     values ($1, $2, $3, $4, $5)`,
    [input.userId, input.tokenHash, input.label, input.maxAgeSeconds ?? null, input.idleTimeoutSeconds ?? null],
  );
}

/** The SQL condition under which an api_tokens row still works (not expired, not idle too long). */
const TOKEN_IS_LIVE = `(max_age_seconds is null or created_at + make_interval(secs => max_age_seconds) > now())
  and (idle_timeout_seconds is null
       or coalesce(last_used_at, created_at) + make_interval(secs => idle_timeout_seconds) > now())`;

/**
 * How stale a token's `last_used_at` may get before a use writes it again. Writing it on every
 * request made each authenticated request a database write (about a third of an upload's database
 * time on the embedded store); like GitHub's and Vercel's "last used", it is kept to the minute.
 * An idle timeout therefore counts from up to this long before the last use.
 */
export const LAST_USED_RESOLUTION_SECONDS = 60;

/** The user owning the live token with this digest; records the use when the last record is older than a minute. */
export async function findUserByTokenHash(db: SqlExecutor, tokenHash: string): Promise<User | null> {
  const { rows } = await db.query<UserRow>(
    `with live as (
       select user_id from api_tokens where token_hash = $1 and ${TOKEN_IS_LIVE}
     ), used as (
       update api_tokens set last_used_at = now()
       where token_hash = $1 and ${TOKEN_IS_LIVE}
         and (last_used_at is null or last_used_at < now() - make_interval(secs => $2))
     )
     select users.* from users join live on live.user_id = users.id`,
    [tokenHash, LAST_USED_RESOLUTION_SECONDS],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

/** The user id of the oldest token with this label; null when there is none. */
export async function findFirstTokenOwner(db: SqlExecutor, label: string): Promise<string | null> {
  const { rows } = await db.query<{ user_id: string }>("select user_id from api_tokens where label = $1 order by created_at limit 1", [label]);
  return rows[0]?.user_id ?? null;
}

/** Deletes the user's tokens with this label that no longer work; returns how many. */
export async function deleteDeadApiTokens(db: SqlExecutor, userId: string, label: string): Promise<number> {
  const { rowCount } = await db.query(
    `delete from api_tokens where user_id = $1 and label = $2 and not (${TOKEN_IS_LIVE})`,
    [userId, label],
  );
  return rowCount;
}

/** Deletes the token with this digest when it has this label; whether one was deleted. */
export async function deleteApiTokenWithLabel(db: SqlExecutor, tokenHash: string, label: string): Promise<boolean> {
  const { rowCount } = await db.query("delete from api_tokens where token_hash = $1 and label = $2", [tokenHash, label]);
  return rowCount > 0;
}

/** Deletes every token of the user with this label; returns how many. */
export async function deleteApiTokensWithLabel(db: SqlExecutor, userId: string, label: string): Promise<number> {
  const { rowCount } = await db.query("delete from api_tokens where user_id = $1 and label = $2", [userId, label]);
  return rowCount;
}
