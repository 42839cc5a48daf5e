import { isUuid } from "./ids";
import type { SqlExecutor } from "./sql";

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

/** Creates the user with this id if it does not exist yet (external identities such as Supabase Auth). */
export async function ensureUser(db: SqlExecutor, input: { id: string; email: string | null; name: string }): Promise<User> {
  const { rows } = await db.query<UserRow>(
    `insert into users (id, email, name) values ($1, $2, $3)
     on conflict (id) do update set email = coalesce(users.email, excluded.email)
     returning *`,
    [input.id, input.email, input.name],
  );
  return toUser(rows[0]);
}

export async function countUsers(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ count: number }>("select count(*)::int as count from users");
  return rows[0].count;
}

/** Stores the SHA-256 digest of a new API token. */
export async function insertApiToken(db: SqlExecutor, input: { userId: string; tokenHash: string; label: string }): Promise<void> {
  await db.query("insert into api_tokens (user_id, token_hash, label) values ($1, $2, $3)", [
    input.userId,
    input.tokenHash,
    input.label,
  ]);
}

/** The user owning the token with this digest, marking the token as used. */
export async function findUserByTokenHash(db: SqlExecutor, tokenHash: string): Promise<User | null> {
  const { rows } = await db.query<UserRow>(
    `with used as (
       update api_tokens set last_used_at = now() where token_hash = $1 returning user_id
     )
     select users.* from users join used on used.user_id = users.id`,
    [tokenHash],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

export async function deleteApiToken(db: SqlExecutor, tokenHash: string): Promise<void> {
  await db.query("delete from api_tokens where token_hash = $1", [tokenHash]);
}
