import "../helpers/real-dev-servers";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { NotFoundError as SdkNotFoundError, Sandbox as SdkSandbox, TimeoutError as SdkTimeoutError } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppDevServer } from "@/lib/dev-servers";
import { NotConfiguredError } from "@/lib/errors";
import {
  APP_DIR,
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  SandboxNotFoundError,
  SandboxTimeoutError,
  type Sandbox,
  type SandboxProvider,
} from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { killTreeScript } from "@/lib/sandbox/drivers/e2b-commands";
import { fromE2BError } from "@/lib/sandbox/drivers/e2b-errors";
import { isProcessAlive, waitUntilGone } from "@/lib/sandbox/drivers/local-os-processes";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";

// What the E2B driver adds to the SDK, beyond the contract suite (tests/sandbox/e2b-contract.test.ts):
// its lifetime and auto-pause, cleanup of a failed seed, error mapping and redaction, Expo's
// command and https preview, and the takeover of a running command by another instance. The real
// `e2b` SDK, against one local sandbox service for the file.

/** Generous for a loaded 2-core machine: sandboxes are walled processes started on demand. */
const SLOW_MS = 120_000;

let service: SandboxServiceProcess;
let provider: SandboxProvider;
let sandbox: Sandbox;
const connection = () => ({ apiKey: service.apiKey, apiUrl: service.url, sandboxUrl: service.url });

/** Sandbox ids the service lists, through the SDK's own listing. */
async function listedSandboxIds(): Promise<string[]> {
  const paginator = SdkSandbox.list(connection());
  const ids: string[] = [];
  while (paginator.hasNext) ids.push(...(await paginator.nextItems()).map((info) => info.sandboxId));
  return ids;
}

beforeAll(async () => {
  service = await startSandboxService(path.join(process.env.DATA_DIR!, "sandbox-service"));
  provider = createE2BSandboxProvider(connection());
  sandbox = await provider.create();
}, SLOW_MS);

afterAll(async () => {
  if (sandbox) await provider.kill(sandbox.sandboxId).catch(() => false);
  await service?.stop();
});

describe("E2B sandbox driver (real SDK on the local sandbox service)", { timeout: SLOW_MS }, () => {
  it("needs an API key", () => {
    expect(() => createE2BSandboxProvider({ apiKey: undefined })).toThrow(NotConfiguredError);
  });

  it("creates sandboxes with an hour's lifetime that pause at its end, keeping files, and resume on connect", async () => {
    const info = await SdkSandbox.getInfo(sandbox.sandboxId, connection());
    expect(info).toMatchObject({ templateId: "base", state: "running" });
    // The lifetime counts from when the sandbox answered, after its start.
    expect(info.endAt.getTime() - info.startedAt.getTime()).toBeGreaterThanOrEqual(3_600_000);

    const pausing = await provider.create();
    await pausing.files.write("/home/user/kept.txt", "kept while paused");
    // The end of the lifetime, brought forward: what happens then was chosen at create.
    await SdkSandbox.setTimeout(pausing.sandboxId, 1_000, connection());
    while ((await SdkSandbox.getInfo(pausing.sandboxId, connection())).state !== "paused") await delay(100);

    const resumed = await provider.connect(pausing.sandboxId);
    expect((await SdkSandbox.getInfo(pausing.sandboxId, connection())).state).toBe("running");
    expect(await resumed.files.read("/home/user/kept.txt")).toBe("kept while paused");
    expect(await provider.kill(pausing.sandboxId)).toBe(true);
  });

  it("kills the new sandbox when seeding the app template fails", async () => {
    // A template whose every file git ignores: its first commit has nothing to commit.
    const templatesDir = await fs.mkdtemp(path.join(os.tmpdir(), "e2b-templates-"));
    await fs.mkdir(path.join(templatesDir, "ignored"));
    await fs.writeFile(path.join(templatesDir, "ignored", ".gitignore"), "*\n");
    const before = await listedSandboxIds();
    const failure = await createE2BSandboxProvider({ ...connection(), templatesDir })
      .create({ template: "ignored" })
      .catch((error: unknown) => error);
    await fs.rm(templatesDir, { recursive: true, force: true });
    expect(failure).toBeInstanceOf(CommandExitError);
    expect((await listedSandboxIds()).sort()).toEqual(before.sort());
  });

  it("maps the SDK's errors by class, the deprecated NotFoundError to a file or a sandbox", () => {
    expect(fromE2BError(new SdkNotFoundError("gone"), { path: "/home/user/x" })).toBeInstanceOf(FileNotFoundError);
    expect(fromE2BError(new SdkNotFoundError("gone"), { sandboxId: "i0" })).toBeInstanceOf(SandboxNotFoundError);
    expect(fromE2BError(new SdkTimeoutError("deadline exceeded"))).toBeInstanceOf(SandboxTimeoutError);
  });

  it("never lets the API key reach an error message, even where the service quotes a path", async () => {
    const named = `/home/user/${service.apiKey}`;
    await sandbox.files.makeDir(named);
    const error = await sandbox.files.read(named).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain("path is not a file");
    expect((error as Error).message).not.toContain(service.apiKey);
  });

  it("starts the app dev server with Expo's command on port 8081, behind an https preview host", async () => {
    // The app's own `expo` (what npx runs), standing still: only how the driver starts it matters here.
    await sandbox.files.write(`${APP_DIR}/node_modules/.bin/expo`, "#!/bin/sh\nexec sleep 300\n");
    await sandbox.commands.run(`chmod +x ${APP_DIR}/node_modules/.bin/expo`);
    const server = await startAppDevServer(sandbox, { readyTimeoutMs: 0 });
    expect(server.previewUrl).toBe(`https://8081-${sandbox.sandboxId}.localhost:${service.port}`);
    expect(sandbox.getHost(3000)).toBe(`3000-${sandbox.sandboxId}.localhost:${service.port}`);
    expect(await sandbox.reservePort("app", 8081)).toBe(8081);
    const started = (await sandbox.commands.list()).find((info) => info.pid === server.handle.pid);
    expect(started?.args.at(-1)).toBe("npx expo start --web --port $PORT --host lan");
    expect(started).toMatchObject({ cwd: APP_DIR, envs: { PORT: "8081", BROWSER: "none", EXPO_NO_TELEMETRY: "1" } });
    expect(await server.handle.kill()).toBe(true);
    await expect(server.handle.wait()).rejects.toBeInstanceOf(CommandExitError);
  });

  it("takes over a command another instance started: it died, the command runs on and its later output arrives here", async () => {
    await sandbox.files.remove("/home/user/takeover-go");
    // The first instance: another process with its own SDK client, killed once its command runs.
    const firstInstance = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { Sandbox } from "e2b";
         const { TAKEOVER_SANDBOX_ID: id, TAKEOVER_API_KEY: apiKey, TAKEOVER_URL: url } = process.env;
         const sandbox = await Sandbox.connect(id, { apiKey, apiUrl: url, sandboxUrl: url });
         let sawFirst;
         const first = new Promise((resolve) => (sawFirst = resolve));
         const handle = await sandbox.commands.run("echo first; while [ ! -f takeover-go ]; do sleep 0.05; done; echo second; sleep 300", { background: true, timeoutMs: 0, onStdout: (data) => data.includes("first") && sawFirst() });
         await first;
         console.log(handle.pid);
         setInterval(() => undefined, 60_000);`,
      ],
      // The key in the environment, never on a command line.
      { env: { NODE_ENV: "test", PATH: process.env.PATH, TAKEOVER_SANDBOX_ID: sandbox.sandboxId, TAKEOVER_API_KEY: service.apiKey, TAKEOVER_URL: service.url }, stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise((resolve) => firstInstance.once("exit", resolve));
    const [pidLine] = await Promise.race([
      once(readline.createInterface({ input: firstInstance.stdout }), "line") as Promise<string[]>,
      exited.then(() => Promise.reject(new Error("the first instance ended before it started the command"))),
    ]);
    const pid = Number(pidLine);
    firstInstance.kill("SIGKILL");
    await exited;

    // This instance: a client of its own, connecting to the command by pid.
    const lines: string[] = [];
    let sawSecond!: () => void;
    const second = new Promise<void>((resolve) => (sawSecond = resolve));
    const taken = await (await provider.connect(sandbox.sandboxId)).commands.connect!(pid, {
      onStdout: (line) => {
        lines.push(line);
        if (line === "second\n") sawSecond();
      },
    });
    expect(taken.pid).toBe(pid);
    expect((await sandbox.commands.list()).map((info) => info.pid)).toContain(pid);
    await sandbox.files.write("/home/user/takeover-go", "");
    await second;
    // Output from before the connect went to the instance that died (it printed the pid once it had read "first").
    expect(lines).toEqual(["second\n"]);

    expect(await taken.kill()).toBe(true);
    await expect(taken.wait()).rejects.toBeInstanceOf(CommandExitError);
    expect(await service.isSandboxProcessGone(pid)).toBe(true);
  });

  it("kill-tree script ends a process and all its descendants (run here with bash)", async () => {
    const parent = spawn("bash", ["-c", "sleep 300 & echo $!; sleep 300 & echo $!; wait"], { stdio: ["ignore", "pipe", "ignore"] });
    const children: number[] = [];
    for await (const line of readline.createInterface({ input: parent.stdout })) {
      if (children.push(Number(line)) === 2) break;
    }
    await promisify(execFile)("bash", ["-c", killTreeScript(parent.pid!)]);
    await waitUntilGone([parent.pid!, ...children], []);
    for (const pid of [parent.pid!, ...children]) expect(await isProcessAlive(pid)).toBe(false);
  });
});
