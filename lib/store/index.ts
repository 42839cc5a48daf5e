import path from "node:path";
import { getConfig } from "@/lib/config";
import { migrate } from "./migrate";
import { openPglite } from "./pglite";
import { openPostgres } from "./postgres";
import type { Sql, SqlExecutor } from "./sql";

export type { Sql, SqlExecutor, QueryResult } from "./sql";
export { DatabaseLockedError, readDatabaseLock, type DatabaseLockHolder } from "./lock";

/** The embedded database's directory under DATA_DIR. */
export const pgliteDirOf = (dataDir: string) => path.join(dataDir, "pglite");

/**
 * Opens the configured store and applies pending migrations. The embedded database is locked
 * for this process (one writer); `baseUrl` is recorded in the lock for refused CLIs.
 */
export async function openStore(options: { databaseUrl?: string; dataDir: string; baseUrl?: string }): Promise<Sql> {
  const sql = options.databaseUrl
    ? await openPostgres(options.databaseUrl)
    : await openPglite(pgliteDirOf(options.dataDir), { baseUrl: options.baseUrl });
  try {
    await migrate(sql);
  } catch (error) {
    await sql.close();
    throw error;
  }
  return sql;
}

// PGlite is a single connection per data directory: one instance per process, shared by every
// route bundle Next.js loads, hence globalThis rather than a module variable.
const holder = globalThis as typeof globalThis & { __appStore?: Promise<Sql> };

/** The process-wide store, opened on first use. */
export function getStore(): Promise<Sql> {
  if (process.env.NEXT_PHASE === "phase-production-build") {
    throw new Error("The store must not be opened during next build.");
  }
  if (!holder.__appStore) {
    const config = getConfig();
    holder.__appStore = openStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, baseUrl: config.PUBLIC_BASE_URL });
    holder.__appStore.catch(() => {
      holder.__appStore = undefined;
    });
  }
  return holder.__appStore;
}

/** Closes the process-wide store (shutdown, tests). */
export async function closeStore(): Promise<void> {
  const pending = holder.__appStore;
  holder.__appStore = undefined;
  if (pending) await (await pending).close();
}

/** Answers once the store answers a trivial query (health checks). */
export async function pingStore(db: SqlExecutor): Promise<void> {
  await db.query("select 1");
}
