import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

// Every test file gets its own data directory (PGlite, blobs, sandboxes, secrets key) so files
// can run in parallel without sharing state.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-test-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL ??= "silent";
process.env.SEED_DEMO = "false";

afterAll(async () => {
  const { stopInstance } = await import("@/lib/instance");
  const { closeStore } = await import("@/lib/store");
  stopInstance();
  await closeStore();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
