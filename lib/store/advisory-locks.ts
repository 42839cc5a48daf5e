import type { SqlExecutor } from "./port";

/**
 * Holds a transaction-scoped advisory lock until `tx` ends: a numeric key, or a text key hashed
 * by the database. Across processes sharing one PostgreSQL, sections under the same key queue.
 */
export async function lockForTransaction(tx: SqlExecutor, key: number | string): Promise<void> {
  if (typeof key === "number") await tx.query("select pg_advisory_xact_lock($1)", [key]);
  else await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [key]);
}
