import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, inject, vi } from "vitest";
import { pgliteDirOf } from "@/lib/store";
import { claimPortSlice } from "./helpers/port-slice";
import { removeTreeSync } from "./helpers/scratch";

// The scratch file system (tests/helpers/scratch.ts) and, for the suite, its toolchain copy
// (tests/global-setup.ts; the unit project has none and keeps the default). Every test file gets its own data directory (PGlite, blobs,
// sandboxes, secrets key) so files can run in parallel without sharing state.
const scratchTempDir = inject("scratchTempDir");
if (scratchTempDir) process.env.TMPDIR = scratchTempDir;
const appToolchainDir = inject("appToolchainDir");
if (appToolchainDir) process.env.APP_TOOLCHAIN_DIR = appToolchainDir;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-test-"));
process.env.DATA_DIR = dataDir;
// The run's initialised database (tests/helpers/pglite-template.ts).
const pgliteTemplate = inject("pgliteTemplate");
if (pgliteTemplate) fs.cpSync(pgliteTemplate, pgliteDirOf(dataDir), { recursive: true });
process.env.LOG_LEVEL ??= "silent";
process.env.SEED_DEMO = "false";
// The suite runs on the unwalled local driver; a file that tests the product on the local sandbox
// service sets SANDBOX_DRIVER=local itself (tests/sandbox/local-service.test.ts).
process.env.SANDBOX_DRIVER = "local-unwalled";
// Tests mirror repositories when they mean to; a timed autosave would touch sandboxes mid-test.
process.env.REPOSITORY_AUTOSAVE_CRON = "off";
const portSlice = await claimPortSlice();
process.env.LOCAL_PORT_RANGE = portSlice.range;
process.env.EMULATOR_PORT_RANGE = portSlice.emulatorRange;

// The app's dev servers are stand-ins unless the file imports tests/helpers/real-dev-servers.ts
// (see tests/helpers/dev-server-stand-in.mjs).
const standIn = JSON.stringify(path.resolve("tests", "helpers", "dev-server-stand-in.mjs"));
process.env.APP_DEV_COMMAND = `node ${standIn} app`;
process.env.BACKEND_DEV_COMMAND = `node ${standIn} backend`;

// Every answer of a route handler is checked against the OpenAPI document (lib/api-contract), so
// every route test validates its responses; a contract mismatch fails the request with the reason.
vi.mock("@/lib/http", async (importOriginal) => {
  const http = await importOriginal<typeof import("@/lib/http")>();
  const { assertMatchesApiContract } = await import("./helpers/api-contract");
  const route: typeof http.route = (handler) => {
    const wrapped = http.route(handler);
    return async (request, context) => {
      const response = await wrapped(request, context);
      await assertMatchesApiContract(request, response);
      return response;
    };
  };
  return { ...http, route };
});

afterAll(async () => {
  const { resetProcessSingletons } = await import("@/lib/singletons");
  await resetProcessSingletons();
  portSlice.release();
  removeTreeSync(dataDir);
});
