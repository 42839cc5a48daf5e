import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { lockDatabaseDirectory } from "../lock";
import { INT8_OID, type Sql, type SqlExecutor } from "../port";

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

const INIT_SCRIPT = path.join(/*turbopackIgnore: true*/ process.cwd(), "lib", "store", "drivers", "pglite-init-process.mjs");

/**
 * Initialises a new embedded database directory in a short-lived child process; an initialised
 * one is left alone. In-process, PGlite's initdb grows its WebAssembly memory to about 630 MB that
 * the process keeps for good; opening an initialised directory costs about 200 MB. The server
 * calls this at start, while it is still small, so its first start peaks no higher than a restart.
 */
export async function initializePgliteApart(dataDir: string, options: { baseUrl?: string } = {}): Promise<void> {
  const initialised = (dir: string) => fs.access(path.join(dir, "PG_VERSION")).then(() => true, () => false);
  if (await initialised(dataDir)) return;
  await fs.mkdir(dataDir, { recursive: true });
  const release = await lockDatabaseDirectory(dataDir, options.baseUrl);
  try {
    if (await initialised(dataDir)) return;
    const child = spawn(process.execPath, [INIT_SCRIPT, dataDir], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2_000)));
    const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
    if (code !== 0) throw new Error(`Initialising the embedded database in ${dataDir} failed (${signal ?? `exit code ${code}`}): ${stderr.trim()}`);
  } finally {
    await release();
  }
}

/**
 * PostgreSQL's default 128 MB of shared buffers is most of PGlite's memory at rest. The service's
 * tables are small and the files stay in the OS page cache, so 16 MB costs no measurable speed
 * and keeps about 90 MB out of the server's resident memory.
 */
const START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];

function createPglite(dataDir: string | undefined): Promise<PGlite> {
  return PGlite.create(dataDir, { parsers: { [INT8_OID]: (value: string) => Number(value) }, startParams: START_PARAMS });
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
