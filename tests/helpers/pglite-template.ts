import fs from "node:fs";
import path from "node:path";
import { openStore, pgliteDirOf } from "@/lib/store";
import { initializePgliteApart } from "@/lib/store/drivers/pglite";

interface Template {
  dir: Promise<string>;
  users: number;
  remove(): void;
}

/** Shared by the projects' global setups, which vitest runs in one process, each with its own module instance. */
const SHARED = Symbol.for("cloud-backend-service.tests.pgliteTemplate");
const holder = globalThis as { [SHARED]?: Template };

async function initialise(dataDir: string): Promise<string> {
  await initializePgliteApart(pgliteDirOf(dataDir));
  const sql = await openStore({ dataDir });
  await sql.close();
  return pgliteDirOf(dataDir);
}

/**
 * A new embedded database costs about 4 s of CPU (initdb in WebAssembly, then the migrations), and
 * most test files open one: a run makes it once, the way the server's first start does, and each
 * file's data directory starts from a copy (tests/setup.ts). The projects of a run share it;
 * `release` deletes it once the last of them is done.
 */
export async function acquirePgliteTemplate(tempDir: string): Promise<{ dir: string; release: () => void }> {
  let template = holder[SHARED];
  if (!template) {
    const dataDir = fs.mkdtempSync(path.join(tempDir, "cbs-pglite-template-"));
    template = { dir: initialise(dataDir), users: 0, remove: () => fs.rmSync(dataDir, { recursive: true, force: true }) };
    holder[SHARED] = template;
  }
  template.users += 1;
  const shared = template;
  const release = () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    shared.remove();
    if (holder[SHARED] === shared) delete holder[SHARED];
  };
  try {
    return { dir: await shared.dir, release };
  } catch (error) {
    release();
    throw error;
  }
}
