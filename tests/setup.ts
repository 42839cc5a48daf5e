import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { claimPortSlice } from "./helpers/port-slice";

// Every test file gets its own data directory (PGlite, blobs, sandboxes, secrets key) so files
// can run in parallel without sharing state.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-test-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL ??= "silent";
process.env.SEED_DEMO = "false";
const portSlice = await claimPortSlice();
process.env.LOCAL_PORT_RANGE = portSlice.range;

// The app's dev servers are stand-ins unless the file imports tests/helpers/real-dev-servers.ts
// (see tests/helpers/dev-server-stand-in.mjs).
const standIn = JSON.stringify(path.resolve("tests", "helpers", "dev-server-stand-in.mjs"));
process.env.APP_DEV_COMMAND = `node ${standIn} app`;
process.env.BACKEND_DEV_COMMAND = `node ${standIn} backend`;

afterAll(async () => {
  const { resetProcessSingletons } = await import("@/lib/singletons");
  await resetProcessSingletons();
  portSlice.release();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
