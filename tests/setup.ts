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
// Test files run side by side, each with its own sandboxes root, so no file sees the ports the
// others reserved: each worker gets its own slice of the range for its sandboxes' servers.
const WORKER_PORT_SLICE = 200;
const workerSlot = (Number(process.env.VITEST_POOL_ID ?? 1) - 1) % 5;
process.env.LOCAL_PORT_RANGE = `${24_000 + workerSlot * WORKER_PORT_SLICE}-${24_000 + (workerSlot + 1) * WORKER_PORT_SLICE - 1}`;

// The app's dev servers are stand-ins unless the file imports tests/helpers/real-dev-servers.ts
// (see tests/helpers/dev-server-stand-in.mjs).
const standIn = JSON.stringify(path.resolve("tests", "helpers", "dev-server-stand-in.mjs"));
process.env.APP_DEV_COMMAND = `node ${standIn} app`;
process.env.BACKEND_DEV_COMMAND = `node ${standIn} backend`;

afterAll(async () => {
  const { resetProcessSingletons } = await import("@/lib/singletons");
  await resetProcessSingletons();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
