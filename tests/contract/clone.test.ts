import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, "..", "..");
/**
 * The contract check's own tests, which once read Convex's documents from beside the clone; every
 * file that checks the emulator loads the same module. In the unit project: no toolchain or browser
 * to prepare, so the clone costs seconds of CPU.
 */
const CONTRACT_TESTS = ["tests/contract/openapi.test.ts"];

/** The environment of a vitest run of its own: none of this run's worker variables. */
function childEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST") && name !== "TEST")) as NodeJS.ProcessEnv;
}

describe("a clone anywhere", () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "clone-"));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it("runs the contract tests in a fresh clone with nothing beside it but its node_modules", { timeout: 300_000 }, async () => {
    const clone = path.join(scratch, "repo");
    await run("git", ["clone", "--quiet", REPO, clone]);
    expect(fs.readdirSync(scratch)).toEqual(["repo"]);
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(clone, "node_modules"), "dir");
    const vitest = path.join(clone, "node_modules", "vitest", "vitest.mjs");
    const { stdout } = await run(process.execPath, [vitest, "run", "--project", "unit", "--reporter=dot", ...CONTRACT_TESTS], { cwd: clone, env: childEnvironment(), maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`vitest failed in the clone:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
      },
    );
    // Without colour codes, should the environment force them.
    expect(stdout.replace(/\x1b\[[0-9;]*m/g, "")).toMatch(new RegExp(`Test Files\\s+${CONTRACT_TESTS.length} passed \\(${CONTRACT_TESTS.length}\\)`));
  });
});
