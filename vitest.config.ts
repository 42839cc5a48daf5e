import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * The crash-recovery files: minutes of server processes started one after another. Their own
 * project, "crash", sorts before "suite", so vitest starts them first (it orders files by project
 * name, then by size) and they run beside the rest, not alone after it with workers idle.
 */
const CRASH_TESTS = ["tests/cloud/crash.test.ts", "tests/cloud/crash-upstream.test.ts"];

/**
 * The fast loop (`npm run test:unit`): files that need no app toolchain, browser, database peer or
 * child process, so they run without the suite's global setup (theirs only makes the embedded
 * database they start from). A file that starts needing one moves to the suite.
 */
const UNIT_TESTS = [
  "tests/api/openapi.test.ts",
  "tests/architecture/imports.test.ts",
  "tests/architecture/lazy-vendors.test.ts",
  "tests/assets/content.test.ts",
  "tests/assets/filename.test.ts",
  "tests/assets/lock.test.ts",
  "tests/assets/manifest.test.ts",
  "tests/assets/multipart.test.ts",
  "tests/backend/admin-key.test.ts",
  "tests/backend/auth-keys.test.ts",
  "tests/backend/errors.test.ts",
  "tests/backend/retries.test.ts",
  "tests/blob/helpers.test.ts",
  "tests/blob/route.test.ts",
  "tests/cli/env.test.ts",
  "tests/cloud/backend-push.test.ts",
  "tests/config.test.ts",
  "tests/contract/openapi.test.ts",
  "tests/dashboard/error-feed.test.ts",
  "tests/devlog/patterns.test.ts",
  "tests/devlog/scanner.test.ts",
  "tests/devlog/structure.test.ts",
  "tests/http/body-reading.test.ts",
  "tests/http/oversize-upload.test.ts",
  "tests/injection/layout-edge-cases.test.ts",
  "tests/injection/templates.test.ts",
  "tests/instance/heartbeat.test.ts",
  "tests/oauth/routes.test.ts",
  "tests/oauth/state.test.ts",
  "tests/prompts/prompts.test.ts",
  "tests/prompts/system-prompt-route.test.ts",
  "tests/realtime/index.test.ts",
  "tests/realtime/memory.test.ts",
  "tests/realtime/payload.test.ts",
  "tests/realtime/publish.test.ts",
  "tests/realtime/pusher.test.ts",
  "tests/realtime/sse.test.ts",
  "tests/redact.test.ts",
  "tests/sandbox/lines.test.ts",
  "tests/sandbox/local-contract.test.ts",
  "tests/sandbox/local-paths.test.ts",
  "tests/secrets.test.ts",
  "tests/shutdown/shutdown.test.ts",
  "tests/store/pglite.test.ts",
  "tests/updates/protocol.test.ts",
];

/** Checks the machine's peers and prepares the app toolchain (tests/global-setup.ts). */
const GLOBAL_SETUP = ["tests/global-setup.ts"];

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    setupFiles: ["tests/setup.ts"],
    pool: "forks",
    // Vitest's default on this 2-core machine is one worker, but most files spend their time
    // waiting on child processes (Expo, the convex CLI, servers), timers and retries: with three
    // files at a time the run used 139 % of the two cores instead of 125 %, at the same CPU time.
    maxWorkers: 3,
    // Sized for a loaded 2-core machine: many tests drive the real Expo and convex toolchains.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    projects: [
      { extends: true, test: { name: "unit", globalSetup: ["tests/global-setup-unit.ts"], include: UNIT_TESTS } },
      { extends: true, test: { name: "suite", globalSetup: GLOBAL_SETUP, include: ["tests/**/*.test.ts"], exclude: [...UNIT_TESTS, ...CRASH_TESTS] } },
      { extends: true, test: { name: "crash", globalSetup: GLOBAL_SETUP, include: CRASH_TESTS } },
    ],
  },
});
