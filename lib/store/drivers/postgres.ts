import type pg from "pg";
import { isErrorOf } from "@/lib/errors";
import { log } from "@/lib/log";
import { isConnectionLoss, StoreUnavailableError } from "../errors";
import { INT8_OID, type Sql, type SqlExecutor } from "../port";

/** Retries of a connection the pool could not open, and the pause before each (a restart takes a moment). */
const CONNECT_RETRY_DELAYS_MS = [100, 400, 1_000];

/** A store failure as callers get it: a lost connection is StoreUnavailableError (503), anything else as it was. */
function storeError(error: unknown): unknown {
  return isConnectionLoss(error) ? new StoreUnavailableError({ cause: error }) : error;
}

/** A connection that broke while checked out emits 'error' (its query rejects too): unheard, that would end the process. */
const onCheckedOutError = (error: Error) => log.warn("database connection lost", { error });

/** Gives a connection back to the pool; a broken one (`error`) is discarded. */
function release(client: pg.PoolClient, error?: Error): void {
  client.off("error", onCheckedOutError);
  client.release(error);
}

/** A pooled connection; opening one is retried (nothing was sent yet), then StoreUnavailableError. Give it back with {@link release}. */
async function connect(pool: pg.Pool): Promise<pg.PoolClient> {
  for (let attempt = 0; ; attempt++) {
    try {
      const client = await pool.connect();
      client.on("error", onCheckedOutError);
      return client;
    } catch (error) {
      if (!isConnectionLoss(error) || attempt >= CONNECT_RETRY_DELAYS_MS.length) throw storeError(error);
      await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_DELAYS_MS[attempt]));
    }
  }
}

/** Whether a statement only reads: repeating it after a broken connection cannot apply anything twice. */
const READ_ONLY = /^\s*select\b(?![\s\S]*\bfor\s+(?:update|share|no\s+key\s+update|key\s+share)\b)/i;

/**
 * The pool's executor: each statement on a connection of its own. A statement whose connection
 * broke is run once more on a new one when it only reads; a write is not (it may have been
 * applied), so its caller gets StoreUnavailableError.
 */
function poolExecutor(pool: pg.Pool): SqlExecutor {
  const run = async (text: string, params?: unknown[]) => {
    for (let attempt = 0; ; attempt++) {
      const client = await connect(pool);
      try {
        const result = await client.query(text, params);
        release(client);
        return result;
      } catch (error) {
        // A broken connection is discarded, not handed to the next caller.
        release(client, isConnectionLoss(error) ? (error as Error) : undefined);
        if (attempt === 0 && isConnectionLoss(error) && READ_ONLY.test(text)) continue;
        throw storeError(error);
      }
    }
  };
  return {
    async query<Row>(text: string, params?: unknown[]) {
      const result = await run(text, params);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(text: string) {
      // Without parameters pg uses the simple protocol, which accepts several statements.
      await run(text);
    },
  };
}

function clientExecutor(client: pg.PoolClient): SqlExecutor {
  return {
    async query<Row>(text: string, params?: unknown[]) {
      const result = await client.query(text, params).catch((error: unknown) => Promise.reject(storeError(error)));
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(text: string) {
      await client.query(text).catch((error: unknown) => Promise.reject(storeError(error)));
    },
  };
}

let pgModule: Promise<typeof pg> | undefined;

/** The `pg` SDK, imported on first use so a setup on PGlite never loads it. */
export const loadPg = () => (pgModule ??= import("pg").then((imported) => imported.default));

/** A pooled connection to any PostgreSQL, Supabase's included. */
export async function openPostgres(connectionString: string, options: { max?: number } = {}): Promise<Sql> {
  const { Pool, types } = await loadPg();
  const typeParsers = {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID ? (value: string) => Number(value) : types.getTypeParser(oid, format as "text")) as typeof types.getTypeParser,
  };
  const pool = new Pool({ connectionString, max: options.max ?? 10, types: typeParsers });
  // An idle connection closed by the server (restart, failover) must not crash the process;
  // the pool replaces it on the next query.
  pool.on("error", (error) => log.warn("idle database connection lost", { error }));
  // Fail fast with a clear message instead of on the first request.
  const client = await pool.connect().catch(async (error: Error) => {
    await pool.end();
    throw new Error(`Cannot connect to DATABASE_URL: ${error.message}`);
  });
  client.release();
  return {
    kind: "postgres",
    ...poolExecutor(pool),
    async transaction(fn) {
      const connection = await connect(pool);
      const tx = clientExecutor(connection);
      let broken: Error | undefined;
      try {
        await tx.query("BEGIN");
        const result = await fn(tx);
        await tx.query("COMMIT");
        return result;
      } catch (error) {
        if (isErrorOf(error, StoreUnavailableError)) broken = error;
        else await connection.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        release(connection, broken);
      }
    },
    close: () => pool.end(),
  };
}
