import pg from "pg";
import { log } from "@/lib/log";
import { INT8_OID, type Sql, type SqlExecutor } from "./sql";

function executor(client: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<Row>(text: string, params?: unknown[]) {
      const result = await client.query(text, params);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(text: string) {
      // Without parameters pg uses the simple protocol, which accepts several statements.
      await client.query(text);
    },
  };
}

const typeParsers = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** A pooled connection to any PostgreSQL, Supabase's included. */
export async function openPostgres(connectionString: string, options: { max?: number } = {}): Promise<Sql> {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, types: typeParsers });
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
    ...executor(pool),
    async transaction(fn) {
      const connection = await pool.connect();
      try {
        await connection.query("BEGIN");
        const result = await fn(executor(connection));
        await connection.query("COMMIT");
        return result;
      } catch (error) {
        await connection.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}
