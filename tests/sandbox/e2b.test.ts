import "../helpers/real-dev-servers";
import { execFile, spawn } from "node:child_process";
import readline from "node:readline";
import { promisify } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { NotConfiguredError } from "@/lib/errors";
import { startAppDevServer } from "@/lib/dev-servers";
import { APP_DIR, CommandExitError, FileNotFoundError, SandboxError, SandboxNotFoundError, SandboxTimeoutError, type Sandbox } from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { killTreeScript } from "@/lib/sandbox/drivers/e2b-commands";
import { isProcessAlive, waitUntilGone } from "@/lib/sandbox/drivers/local-os-processes";
import { fakeE2BLib, FakeSdkError, FakeSdkSandbox } from "./fake-e2b";

const API_KEY = "e2b_test_key_0123456789";
const provider = () => createE2BSandboxProvider({ apiKey: API_KEY, e2bTemplate: "expo-node", lib: fakeE2BLib });
const sdkOf = (sandbox: Sandbox) => FakeSdkSandbox.instances.get(sandbox.sandboxId)!;

beforeEach(() => FakeSdkSandbox.reset());

describe("E2B sandbox driver (fake SDK)", () => {
  it("needs an API key", () => {
    expect(() => createE2BSandboxProvider({ apiKey: undefined, lib: fakeE2BLib })).toThrow(NotConfiguredError);
  });

  it("creates a sandbox that pauses on timeout and seeds the app template as a git repository", async () => {
    const sandbox = await provider().create({ template: "app" });
    expect(sandbox.driver).toBe("e2b");
    expect(FakeSdkSandbox.created[0].opts).toEqual({
      apiKey: API_KEY,
      template: "expo-node",
      timeoutMs: 3_600_000,
      lifecycle: { onTimeout: "pause" },
    });
    const sdk = sdkOf(sandbox);
    for (const file of ["package.json", "app/_layout.tsx", "app/index.tsx", "app.json", "tsconfig.json", ".gitignore"]) {
      expect(sdk.files.content.has(`${APP_DIR}/${file}`), file).toBe(true);
    }
    const git = sdk.commandLog.find((entry) => entry.cmd.startsWith("git init"));
    expect(git?.opts.cwd).toBe(APP_DIR);
    expect(git?.cmd).toContain("git commit");
  });

  it("kills the new sandbox when seeding fails", async () => {
    FakeSdkSandbox.script = (cmd) => (cmd.startsWith("git init") ? { exitCode: 127, stderr: ["git: not found\n"] } : { exitCode: 0 });
    await expect(provider().create({ template: "app" })).rejects.toBeInstanceOf(CommandExitError);
    expect(FakeSdkSandbox.killed).toEqual(["fake1"]);
  });

  it("reads text by default and bytes on request, and writes bytes as an ArrayBuffer", async () => {
    const sandbox = await provider().create();
    const bytes = new Uint8Array([0, 255, 128, 10]);
    await sandbox.files.write("/home/user/a.bin", bytes.subarray(1));
    const read = await sandbox.files.read("/home/user/a.bin", { format: "bytes" });
    expect([...read]).toEqual([255, 128, 10]);
    await sandbox.files.write([{ path: "/home/user/t.txt", data: "text" }]);
    expect(await sandbox.files.read("/home/user/t.txt")).toBe("text");
    expect(sdkOf(sandbox).files.readFormats).toEqual(["bytes", undefined]);
    expect(await sandbox.files.list("/home/user")).toEqual([
      { name: "a.bin", path: "/home/user/a.bin", type: "file", size: 3, modifiedTime: new Date(0) },
      { name: "t.txt", path: "/home/user/t.txt", type: "file", size: 4, modifiedTime: new Date(0) },
    ]);
  });

  it("maps the SDK's not-found errors, the deprecated parent included", async () => {
    const sandbox = await provider().create();
    await expect(sandbox.files.read("/home/user/none")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.list("/home/user/none")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(provider().connect("missing")).rejects.toBeInstanceOf(SandboxNotFoundError);
  });

  it("runs foreground commands with whole-line output and port errors", async () => {
    const sandbox = await provider().create();
    FakeSdkSandbox.script = () => ({ stdout: ["par", "tial\nnext\nla", "st"], exitCode: 0 });
    const lines: string[] = [];
    const result = await sandbox.commands.run("build", { cwd: APP_DIR, onStdout: (line) => void lines.push(line) });
    expect(lines).toEqual(["partial\n", "next\n", "last"]);
    expect(result).toEqual({ exitCode: 0, stdout: "partial\nnext\nlast", stderr: "" });
    expect(sdkOf(sandbox).commandLog.at(-1)?.opts).toMatchObject({ cwd: APP_DIR, timeoutMs: 60_000 });

    FakeSdkSandbox.script = () => ({ stderr: ["boom\n"], exitCode: 2 });
    await expect(sandbox.commands.run("fail")).rejects.toMatchObject({ name: "CommandExitError", exitCode: 2, stderr: "boom\n" });
    FakeSdkSandbox.script = () => ({ error: new FakeSdkError("TimeoutError", "deadline exceeded") });
    await expect(sandbox.commands.run("slow", { timeoutMs: 10 })).rejects.toBeInstanceOf(SandboxTimeoutError);
  });

  it("never lets the API key reach an error message", async () => {
    const sandbox = await provider().create();
    FakeSdkSandbox.script = () => ({ error: new FakeSdkError("AuthenticationError", `invalid key ${API_KEY}`) });
    const error = await sandbox.commands.run("x").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as Error).message).not.toContain(API_KEY);
  });

  it("wraps background commands: streaming, listing, killing the process tree", async () => {
    const sandbox = await provider().create();
    FakeSdkSandbox.script = (cmd) => (cmd === "serve" ? { stdout: ["ready\n"] } : { exitCode: 0 });
    const lines: string[] = [];
    const handle = await sandbox.commands.run("serve", { background: true, timeoutMs: 0, onStdout: (line) => void lines.push(line) });
    expect(lines).toEqual(["ready\n"]);
    expect(sdkOf(sandbox).commandLog[0].opts.timeoutMs).toBe(0);
    expect((await sandbox.commands.list()).map((info) => info.pid)).toEqual([handle.pid]);

    expect(await handle.kill()).toBe(true);
    expect(sdkOf(sandbox).commandLog.map((entry) => entry.cmd)).toContain(killTreeScript(handle.pid));
    await expect(handle.wait()).rejects.toBeInstanceOf(CommandExitError);
    expect(await sandbox.commands.kill(handle.pid)).toBe(false);
  });

  it("restarts by killing every process and removing a stale git lock, keeping every file", async () => {
    const sandbox = await provider().create({ template: "app" });
    const handle = await sandbox.commands.run("serve", { background: true });
    await sdkOf(sandbox).files.write(`${APP_DIR}/.git/index.lock`, "");
    await sdkOf(sandbox).files.write(`${APP_DIR}/app/new-screen.tsx`, "export default function New() { return null; }");
    const commandsBefore = sdkOf(sandbox).commandLog.length;
    await sandbox.restart();
    expect(await sandbox.commands.list()).toEqual([]);
    await expect(handle.wait()).rejects.toBeInstanceOf(CommandExitError);
    expect(await sandbox.files.exists(`${APP_DIR}/.git/index.lock`)).toBe(false);
    expect(await sandbox.files.read(`${APP_DIR}/app/new-screen.tsx`)).toContain("function New");
    // No git command touched the working tree.
    expect(sdkOf(sandbox).commandLog.slice(commandsBefore).map((entry) => entry.cmd).filter((cmd) => cmd.includes("git"))).toEqual([]);
  });

  it("starts the app dev server with Expo on port 8081 behind an https preview host", async () => {
    const sandbox = await provider().create();
    const server = await startAppDevServer(sandbox, { readyTimeoutMs: 0 });
    expect(server.previewUrl).toBe(`https://8081-${sandbox.sandboxId}.e2b.app`);
    const started = sdkOf(sandbox).commandLog.at(-1)!;
    expect(started.cmd).toBe("npx expo start --web --port $PORT --host lan");
    expect(started.opts).toMatchObject({ background: true, timeoutMs: 0, cwd: APP_DIR, envs: { PORT: "8081", BROWSER: "none", EXPO_NO_TELEMETRY: "1" } });
    expect(sandbox.getHost(3000)).toBe(`3000-${sandbox.sandboxId}.e2b.app`);
    expect(await sandbox.reservePort("app", 8081)).toBe(8081);
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
