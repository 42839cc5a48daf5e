import fs from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { lockDatabaseDirectory } from "./lock";
import { INT8_OID, type Sql, type SqlExecutor } from "./sql";

type Queryable = Pick<PGlite, "query" | "exec">;

function executor(db: Queryable): SqlExecutor {
  return {
    async query<Row>(text: string, params?: unknown[]) {
      const result = await db.query<Row>(text, params as unknown[]);
      // `affectedRows` is 0 for SELECT; the command tag's count covers every statement kind.
      return { rows: result.rows, rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
    },
    async exec(text: string) {
      await db.exec(text);
    },
  };
}

/**
 * Embedded PostgreSQL (WASM) persisted in `dataDir`; `undefined` keeps it in memory. Two
 * processes on one directory lose writes, so a persisted one is locked for this process (see
 * lock.ts; `baseUrl` tells a refused CLI where the holder's API is) until closed.
 */
export async function openPglite(dataDir: string | undefined, options: { baseUrl?: string } = {}): Promise<Sql> {
  if (!dataDir) return wrap(await createPglite(undefined), async () => undefined);
  await fs.mkdir(dataDir, { recursive: true });
  const release = await lockDatabaseDirectory(dataDir, options.baseUrl);
  try {
    return wrap(await createPglite(dataDir), release);
  } catch (error) {
    await release();
    throw error;
  }
}

function createPglite(dataDir: string | undefined): Promise<PGlite> {
  return PGlite.create(dataDir, { parsers: { [INT8_OID]: (value: string) => Number(value) } });
}

function wrap(db: PGlite, release: () => Promise<void>): Sql {
  return {
    kind: "pglite",
    ...executor(db),
    transaction: (fn) => db.transaction((tx) => fn(executor(tx))),
    close: async () => {
      try {
        await db.close();
      } finally {
        await release();
      }
    },
  };
}
