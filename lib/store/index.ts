import path from "node:path";
import { getConfig } from "@/lib/config";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import { migrate } from "./migrate";
import { initializePgliteApart, openPglite } from "./drivers/pglite";
import { openPostgres } from "./drivers/postgres";
import type { Sql, SqlExecutor } from "./port";

export type { Sql, SqlExecutor, QueryResult } from "./port";
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

/**
 * Server start, before the store opens: a new embedded database is initialised in a child
 * process, which keeps its initdb memory out of the server (see initializePgliteApart).
 */
export async function prepareStore(): Promise<void> {
  const config = getConfig();
  if (!config.DATABASE_URL) await initializePgliteApart(pgliteDirOf(config.DATA_DIR), { baseUrl: config.PUBLIC_BASE_URL });
}

const STORE = "store";

function openConfiguredStore(): Promise<Sql> {
  const config = getConfig();
  const pending = openStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, baseUrl: config.PUBLIC_BASE_URL });
  // A store that failed to open is forgotten, so the next call tries again.
  pending.catch(() => resetProcessSingleton(STORE, pending));
  return pending;
}

/**
 * The process-wide store, opened on first use. PGlite is a single connection per data directory,
 * so one instance serves the process; it closes after every other singleton, which may use it.
 */
export function getStore(): Promise<Sql> {
  if (process.env.NEXT_PHASE === "phase-production-build") {
    throw new Error("The store must not be opened during next build.");
  }
  return processSingleton(STORE, openConfiguredStore, {
    close: (pending) => pending.then((sql) => sql.close(), () => undefined),
    closeLast: true,
  });
}

/** Closes the process-wide store (command-line scripts). */
export async function closeStore(): Promise<void> {
  await resetProcessSingleton(STORE);
}

/** Answers once the store answers a trivial query (health checks). */
export async function pingStore(db: SqlExecutor): Promise<void> {
  await db.query("select 1");
}
