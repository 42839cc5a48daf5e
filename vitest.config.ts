import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** Spawns dozens of server processes: run after every other file, so its load slows none of them. */
const CRASH_TESTS = "tests/cloud/crash.test.ts";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    globalSetup: ["tests/global-setup.ts"],
    setupFiles: ["tests/setup.ts"],
    pool: "forks",
    // Vitest's default on this 2-core machine is one worker, but most files spend their time
    // waiting on child processes (Expo, the convex CLI, servers): two files at a time use that.
    maxWorkers: 2,
    // Sized for a loaded 2-core machine: many tests drive the real Expo and convex toolchains.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    projects: [
      { extends: true, test: { name: "suite", include: ["tests/**/*.test.ts"], exclude: [CRASH_TESTS] } },
      { extends: true, test: { name: "crash", include: [CRASH_TESTS], sequence: { groupOrder: 1 } } },
    ],
  },
});
