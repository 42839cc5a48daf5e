import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it, vi } from "vitest";
import { CommandExitError, FileNotFoundError, InvalidArgumentError, PathOutsideSandboxError, type Sandbox } from "@/lib/sandbox";
import { createLocalSandboxProvider } from "@/lib/sandbox/drivers/local";
import { getCommandHost } from "@/lib/sandbox/drivers/local-command-host";
import { isProcessAlive, waitUntilGone } from "@/lib/sandbox/drivers/local-os-processes";

const root = path.join(process.env.DATA_DIR!, "sandboxes");
const provider = createLocalSandboxProvider({ root });
const created: Sandbox[] = [];

async function newSandbox(): Promise<Sandbox> {
  const sandbox = await provider.create();
  created.push(sandbox);
  return sandbox;
}

afterAll(async () => {
  vi.unstubAllEnvs();
  for (const sandbox of created) await provider.kill(sandbox.sandboxId);
});

describe("local sandbox driver", () => {
  it("keeps the service's environment out of commands and maps HOME", async () => {
    vi.stubEnv("E2B_API_KEY", "e2b_secret_value_for_test");
    vi.stubEnv("DATABASE_URL", "postgres://user:secret@localhost/db");
    const sandbox = await newSandbox();
    const { stdout } = await sandbox.commands.run("env");
    expect(stdout).not.toContain("e2b_secret_value_for_test");
    expect(stdout).not.toContain("DATABASE_URL");
    expect(stdout).toContain("HOME=/home/user\n");
    expect(stdout).toContain(`SANDBOX_ID=${sandbox.sandboxId}\n`);
  });

  it("replaces a written file whole: hard links elsewhere keep the old bytes, permissions are kept, no draft is left", async () => {
    const sandbox = await newSandbox();
    await sandbox.files.write("/home/user/run.sh", "echo old\n");
    await sandbox.commands.run("chmod 755 /home/user/run.sh && ln /home/user/run.sh /home/user/shared-copy");
    await sandbox.files.write("/home/user/run.sh", "echo new\n");
    expect(await sandbox.files.read("/home/user/run.sh")).toBe("echo new\n");
    // A hard link (the way sandboxes share the app toolchain's files) still holds the old bytes.
    expect(await sandbox.files.read("/home/user/shared-copy")).toBe("echo old\n");
    expect((await sandbox.commands.run("stat -c %a /home/user/run.sh")).stdout.trim()).toBe("755");
    const drafts = path.join(root, sandbox.sandboxId, "drafts");
    expect(await fs.readdir(drafts)).toEqual([]);
  });

  it("refuses to remove the home directory and refuses malformed sandbox ids", async () => {
    const sandbox = await newSandbox();
    await expect(sandbox.files.remove("/home/user")).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(provider.connect("../../etc")).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(provider.kill("a/b")).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it("copies a host file in through the filesystem: a copy the app can rewrite without touching the source", async () => {
    const sandbox = await newSandbox();
    const source = path.join(process.env.DATA_DIR!, `copy-source-${crypto.randomUUID()}`);
    await fs.writeFile(source, "original bytes");
    try {
      const info = await sandbox.files.copyFromHost!("staging/deep/copied.txt", source);
      expect(info).toEqual({ name: "copied.txt", path: "/home/user/staging/deep/copied.txt", type: "file" });
      expect(await sandbox.files.read("/home/user/staging/deep/copied.txt")).toBe("original bytes");
      // Rewritten in place (same inode when it is one): a hard link would change the source too.
      await sandbox.commands.run("printf changed > staging/deep/copied.txt");
      expect(await fs.readFile(source, "utf8")).toBe("original bytes");
      await expect(sandbox.files.copyFromHost!("../escaped.txt", source)).rejects.toBeInstanceOf(PathOutsideSandboxError);
    } finally {
      await fs.rm(source, { force: true });
    }
  });

  it("renames through the filesystem: replaces a file at the target, refuses paths outside the sandbox", async () => {
    const sandbox = await newSandbox();
    await sandbox.files.write("staging/new.txt", "new");
    await sandbox.files.write("final/old.txt", "old");
    const info = await sandbox.files.rename!("staging/new.txt", "/home/user/final/old.txt");
    expect(info).toEqual({ name: "old.txt", path: "/home/user/final/old.txt", type: "file" });
    expect(await sandbox.files.read("final/old.txt")).toBe("new");
    expect(await sandbox.files.exists("staging/new.txt")).toBe(false);
    await expect(sandbox.files.rename!("staging/missing.txt", "final/x.txt")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.rename!("final/old.txt", "../../outside.txt")).rejects.toBeInstanceOf(PathOutsideSandboxError);
    expect(await sandbox.files.read("final/old.txt")).toBe("new");
  });

  it("after a server restart, reconnects to the directory, keeps ports and ends stray processes", async () => {
    const sandbox = await newSandbox();
    const port = await sandbox.reservePort("app", 8081);
    await sandbox.files.write("/home/user/kept.txt", "still here");
    // One process tracked in memory, one that left its process group: neither can be managed
    // by the next server process, so reconnecting ends both.
    const tracked = await sandbox.commands.run("sleep 300", { background: true, timeoutMs: 0 });
    const escaped = Number((await sandbox.commands.run("setsid sleep 300 > /dev/null 2>&1 & echo $!")).stdout);
    expect(await isProcessAlive(escaped)).toBe(true);

    const restartedServer = createLocalSandboxProvider({ root });
    const reconnected = await restartedServer.connect(sandbox.sandboxId);
    expect(await isProcessAlive(tracked.pid)).toBe(false);
    expect(await isProcessAlive(escaped)).toBe(false);
    expect(await reconnected.commands.list()).toEqual([]);
    expect(await reconnected.reservePort("app", 8081)).toBe(port);
    expect(await reconnected.files.read("kept.txt")).toBe("still here");
    expect(reconnected.getHost(port)).toBe(`localhost:${port}`);
  });

  it("runs commands with /home/user paths when the data directory holds a space", async () => {
    const spaced = createLocalSandboxProvider({ root: path.join(process.env.DATA_DIR!, "my sandboxes") });
    const sandbox = await spaced.create();
    try {
      await sandbox.files.write("/home/user/app/note.txt", "spaced");
      const result = await sandbox.commands.run("cat /home/user/app/note.txt && cd $HOME/app && pwd");
      expect(result.stdout).toBe("spaced/home/user/app\n");
    } finally {
      await spaced.kill(sandbox.sandboxId);
    }
  });

  it("hands out different ports to different sandboxes and services, also when they all ask at once", async () => {
    const sandboxes = await Promise.all(Array.from({ length: 8 }, () => newSandbox()));
    const ports = await Promise.all(sandboxes.flatMap((sandbox) => [sandbox.reservePort("app", 8081), sandbox.reservePort("backend", 3210)]));
    expect(new Set(ports).size).toBe(16);
    // A sandbox's second call for a service answers its first port.
    expect(await sandboxes[0].reservePort("app", 8081)).toBe(ports[0]);
  });

  it("spawns commands from the command host, never from the server process", async () => {
    const sandbox = await newSandbox();
    // $PPID is the supervisor; its parent spawned the command.
    const { stdout } = await sandbox.commands.run("ps -o ppid= -p $PPID");
    const spawner = Number(stdout.trim());
    expect(spawner).toBe(getCommandHost().pid);
    expect(spawner).not.toBe(process.pid);
  });

  it("reports a command killed when the command host dies, and starts a new host for the next one", async () => {
    const sandbox = await newSandbox();
    const host = getCommandHost();
    const handle = await sandbox.commands.run("sleep 300", { background: true, timeoutMs: 0 });
    process.kill(host.pid!, "SIGKILL");
    const ended = await handle.wait().catch((error: unknown) => error);
    expect(ended).toBeInstanceOf(CommandExitError);
    expect(ended).toMatchObject({ exitCode: -1, error: "signal: SIGKILL" });
    await expect(waitUntilGone([], [handle.pid])).resolves.toBeUndefined();
    expect(await sandbox.commands.list()).toEqual([]);
    expect((await sandbox.commands.run("echo again")).stdout).toBe("again\n");
    expect(getCommandHost()).not.toBe(host);
  });

  it("ends a sandbox's commands when the server process dies, even by SIGKILL", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/die-with-running-command.ts", import.meta.url));
    const died = await promisify(execFile)(process.execPath, ["--import", "tsx", fixture, root]).catch((error: { stdout: string; signal: string }) => error);
    expect(died).toMatchObject({ signal: "SIGKILL" });
    const pids = died.stdout.trim().split(" ").map(Number);
    expect(pids.length).toBeGreaterThanOrEqual(3); // supervisor, both sleeps (and the lifeline job)
    await expect(waitUntilGone(pids, [])).resolves.toBeUndefined();
  });
});
