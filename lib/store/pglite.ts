import fs from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
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

/** Embedded PostgreSQL (WASM) persisted in `dataDir`; `undefined` keeps it in memory. */
export async function openPglite(dataDir: string | undefined): Promise<Sql> {
  if (dataDir) await fs.mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir, { parsers: { [INT8_OID]: (value: string) => Number(value) } });
  return {
    kind: "pglite",
    ...executor(db),
    transaction: (fn) => db.transaction((tx) => fn(executor(tx))),
    close: () => db.close(),
  };
}
