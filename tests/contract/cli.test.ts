import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionManagedProject, queryEnvVariable, setEnvVariables, type ProvisionedBackendProject } from "@/lib/backend";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";

const CONVEX_BIN = path.resolve("node_modules/.bin/convex");

/**
 * The real `convex` CLI (devDependency, 1.48) against an emulated deployment with `--url` and
 * `--admin-key`. `env set`/`env remove` post to `/api/update_environment_variables`; `env get`
 * and `env list` subscribe to `_system/cli/queryEnvironmentVariables[:get]` over the deployment's
 * sync WebSocket (`/api/<version>/sync`), which the emulator answers once.
 */
describe("the convex CLI's env commands against the emulator", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let cwd: string;

  beforeAll(async () => {
    emulator = await startTestEmulator();
    project = await provisionManagedProject({ ...emulator.team, projectName: "cli app" }, emulator.management);
    // The CLI insists on a package.json that depends on convex.
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "convex-cli-"));
    fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "cli-app", private: true, dependencies: { convex: "1.48.0" } }));
  });
  afterAll(async () => {
    await emulator.server.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  /** Runs `convex <args> --url <deployment> --admin-key <key>`; CI=1 keeps it non-interactive and its Sentry reporting off. */
  async function convex(args: string[], key = project.token): Promise<{ stdout: string; stderr: string }> {
    return promisify(execFile)(CONVEX_BIN, [...args, "--url", project.deploymentUrl, "--admin-key", key], {
      cwd,
      env: { ...process.env, CI: "1", CONVEX_PROVISION_HOST: emulator.server.baseUrl, NO_COLOR: "1" },
      // One CLI start took 30 s with two suites on a 2-core machine.
      timeout: 120_000,
    });
  }

  it("env set, env get, env list and env remove succeed and agree with queryEnvVariable", { timeout: 480_000 }, async () => {
    await setEnvVariables(project, { ALREADY: "there" });

    expect((await convex(["env", "set", "FOO", "bar"])).stderr).toContain("Successfully set FOO");
    expect(await queryEnvVariable(project, "FOO")).toBe("bar");
    expect((await convex(["env", "get", "FOO"])).stdout).toBe("bar\n");
    expect((await convex(["env", "list"])).stdout).toBe("ALREADY=there\nFOO=bar\n");

    expect((await convex(["env", "remove", "FOO"])).stderr).toContain("Successfully unset FOO");
    expect(await queryEnvVariable(project, "FOO")).toBeNull();
    expect((await convex(["env", "list"])).stdout).toBe("ALREADY=there\n");
    const missing = await convex(["env", "get", "FOO"]);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain('Environment variable "FOO" not found');
  });

  it("fails with the deploy key of another deployment, printing the hosted error", { timeout: 240_000 }, async () => {
    const other = await provisionManagedProject({ ...emulator.team, projectName: "cli other" }, emulator.management);
    const failure = await convex(["env", "set", "STOLEN", "1"], other.token).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).not.toBe(0);
    expect(failure?.stderr).toContain("BadDeployKey");
    expect(await queryEnvVariable(project, "STOLEN")).toBeNull();
  });
});
