import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APP_DIR,
  CommandExitError,
  FileNotFoundError,
  PathOutsideSandboxError,
  SANDBOX_HOME,
  SandboxNotFoundError,
  SandboxTimeoutError,
  type Sandbox,
  type SandboxProvider,
} from "@/lib/sandbox";

export interface SandboxContractOptions {
  /** Driver name used in the describe title. */
  name: string;
  createProvider: () => SandboxProvider | Promise<SandboxProvider>;
  /**
   * Whether the driver refuses paths outside `/home/user`. A real remote sandbox may read
   * `/etc/passwd` (its own); a local one must not (the host's). @default true
   */
  confinedToHome?: boolean;
  /** `true` once a process no longer exists, checked at the operating-system level. */
  isProcessGone: (pid: number) => Promise<boolean>;
}

/** Collects output lines, and resolves `matched` once a line matches `until`. */
function lineCollector(until?: RegExp) {
  const lines: string[] = [];
  let resolveMatch!: (line: string) => void;
  const matched = new Promise<string>((resolve) => (resolveMatch = resolve));
  const listener = (line: string) => {
    lines.push(line);
    if (until?.test(line)) resolveMatch(line);
  };
  return { lines, matched, listener };
}

/**
 * The behaviour every sandbox driver must have. Registers one describe block; each driver's test
 * file calls it once (unjs/unstorage's `testDriver` pattern).
 */
export function testSandboxDriver(options: SandboxContractOptions): void {
  describe(`sandbox contract: ${options.name}`, () => {
    let provider: SandboxProvider;
    let sandbox: Sandbox;
    /** Every pid a test started: all must be gone at the end. */
    const startedPids = new Set<number>();

    const expectGone = async (pids: number[]) => {
      for (const pid of pids) expect(await options.isProcessGone(pid), `process ${pid} still runs`).toBe(true);
    };

    beforeAll(async () => {
      provider = await options.createProvider();
      sandbox = await provider.create({ template: "app" });
    });

    afterAll(async () => {
      await provider.kill(sandbox.sandboxId);
      await expectGone([...startedPids]);
    });

    describe("files", () => {
      it("round-trips text, creating parent directories and overwriting", async () => {
        const info = await sandbox.files.write("/home/user/notes/deep/hello.txt", "héllo\nworld");
        expect(info).toMatchObject({ name: "hello.txt", path: "/home/user/notes/deep/hello.txt", type: "file" });
        expect(await sandbox.files.read("/home/user/notes/deep/hello.txt")).toBe("héllo\nworld");
        await sandbox.files.write("notes/deep/hello.txt", "second");
        expect(await sandbox.files.read("/home/user/notes/deep/hello.txt", { format: "text" })).toBe("second");
      });

      it("round-trips binary content byte for byte", async () => {
        const bytes = new Uint8Array(512).map((_, index) => (index * 7) % 256); // includes invalid UTF-8
        await sandbox.files.write("/home/user/bin/data.bin", bytes);
        const read = await sandbox.files.read("/home/user/bin/data.bin", { format: "bytes" });
        expect(read).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(read).equals(Buffer.from(bytes))).toBe(true);
        await sandbox.files.write("/home/user/bin/buffer.bin", bytes.slice(0, 3).buffer);
        expect([...(await sandbox.files.read("/home/user/bin/buffer.bin", { format: "bytes" }))]).toEqual([0, 7, 14]);
      });

      it("writes several files at once", async () => {
        const infos = await sandbox.files.write([
          { path: "/home/user/many/a.txt", data: "a" },
          { path: "/home/user/many/b/c.txt", data: new Uint8Array([99]) },
        ]);
        expect(infos.map((info) => info.path)).toEqual(["/home/user/many/a.txt", "/home/user/many/b/c.txt"]);
        expect(await sandbox.files.read("/home/user/many/b/c.txt")).toBe("c");
      });

      it("lists a directory, one level or deeper", async () => {
        await sandbox.files.write([
          { path: "/home/user/listing/one.txt", data: "12345" },
          { path: "/home/user/listing/sub/two.txt", data: "x" },
        ]);
        const flat = await sandbox.files.list("/home/user/listing");
        expect(flat.map(({ name, type }) => ({ name, type }))).toEqual([
          { name: "one.txt", type: "file" },
          { name: "sub", type: "dir" },
        ]);
        expect(flat.find((entry) => entry.name === "one.txt")).toMatchObject({ path: "/home/user/listing/one.txt", size: 5 });
        const deep = await sandbox.files.list("/home/user/listing", { depth: 2 });
        expect(deep.map((entry) => entry.path).sort()).toEqual([
          "/home/user/listing/one.txt",
          "/home/user/listing/sub",
          "/home/user/listing/sub/two.txt",
        ]);
      });

      it("checks existence, makes directories and removes", async () => {
        expect(await sandbox.files.exists("/home/user/made")).toBe(false);
        expect(await sandbox.files.makeDir("/home/user/made/inner")).toBe(true);
        expect(await sandbox.files.makeDir("/home/user/made/inner")).toBe(false);
        await sandbox.files.write("/home/user/made/inner/file.txt", "x");
        expect(await sandbox.files.exists("/home/user/made/inner/file.txt")).toBe(true);
        await sandbox.files.remove("/home/user/made/inner/file.txt");
        expect(await sandbox.files.exists("/home/user/made/inner/file.txt")).toBe(false);
        await sandbox.files.remove("/home/user/made");
        expect(await sandbox.files.exists("/home/user/made")).toBe(false);
        await expect(sandbox.files.remove("/home/user/made")).resolves.toBeUndefined();
      });

      it("reports missing files as FileNotFoundError", async () => {
        await expect(sandbox.files.read("/home/user/missing.txt")).rejects.toBeInstanceOf(FileNotFoundError);
        await expect(sandbox.files.list("/home/user/missing-dir")).rejects.toBeInstanceOf(FileNotFoundError);
      });

      it.runIf(options.confinedToHome !== false)("refuses paths outside the sandbox home", async () => {
        for (const path of ["../../etc/passwd", "/etc/passwd", "/home/user/../../etc/passwd", "/home/username/x", "a\0b"]) {
          await expect(sandbox.files.read(path), path).rejects.toBeInstanceOf(PathOutsideSandboxError);
          await expect(sandbox.files.write(path, "x"), path).rejects.toBeInstanceOf(PathOutsideSandboxError);
          await expect(sandbox.files.remove(path), path).rejects.toBeInstanceOf(PathOutsideSandboxError);
        }
        await sandbox.commands.run("ln -s /etc escape-link && ln -s /nonexistent/target dangling-link");
        await expect(sandbox.files.read("/home/user/escape-link/passwd")).rejects.toBeInstanceOf(PathOutsideSandboxError);
        await expect(sandbox.files.list("/home/user/escape-link")).rejects.toBeInstanceOf(PathOutsideSandboxError);
        await expect(sandbox.files.write("/home/user/dangling-link", "x")).rejects.toBeInstanceOf(PathOutsideSandboxError);
        await sandbox.files.remove("/home/user/escape-link"); // removes the link, not /etc
        expect(await sandbox.files.exists("/home/user/escape-link")).toBe(false);
      });
    });

    describe("commands", () => {
      it("runs a foreground command with output, cwd and envs", async () => {
        const result = await sandbox.commands.run('echo "out $GREETING"; echo err >&2; pwd', {
          cwd: APP_DIR,
          envs: { GREETING: "hi" },
        });
        expect(result).toEqual({ exitCode: 0, stdout: `out hi\n${APP_DIR}\n`, stderr: "err\n" });
      });

      it("starts in the home directory and sees files written through files", async () => {
        await sandbox.files.write("/home/user/seen.txt", "visible");
        const result = await sandbox.commands.run("pwd && cat /home/user/seen.txt");
        expect(result.stdout).toBe(`${SANDBOX_HOME}\nvisible`);
      });

      it("throws CommandExitError on a non-zero exit, with the output", async () => {
        const failure = await sandbox.commands.run("echo partial; echo broken >&2; exit 3").catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(CommandExitError);
        expect(failure).toMatchObject({ exitCode: 3, stdout: "partial\n", stderr: "broken\n" });
      });

      it("delivers output as whole lines, even split mid-line and mid-character", async () => {
        const { lines, listener } = lineCollector();
        await sandbox.commands.run("printf 'par'; sleep 0.05; printf 'tial\\nsecond\\n\\xc3'; sleep 0.05; printf '\\xa9 last'", {
          onStdout: listener,
        });
        expect(lines).toEqual(["partial\n", "second\n", "é last"]);
      });

      it("streams a background command and kills it with its children", async () => {
        const { lines, matched, listener } = lineCollector(/^child:/);
        const handle = await sandbox.commands.run("echo started; sleep 300 & echo child:$!; wait", {
          background: true,
          onStdout: listener,
        });
        const childPid = Number((await matched).slice("child:".length));
        startedPids.add(handle.pid).add(childPid);
        expect(lines[0]).toBe("started\n");
        expect(handle.exitCode).toBeUndefined();
        expect((await sandbox.commands.list()).map((info) => info.pid)).toContain(handle.pid);

        expect(await handle.kill()).toBe(true);
        await expect(handle.wait()).rejects.toBeInstanceOf(CommandExitError);
        expect((await sandbox.commands.list()).map((info) => info.pid)).not.toContain(handle.pid);
        await expectGone([handle.pid, childPid]);
        expect(await handle.kill()).toBe(false);
      });

      it("kills a background command by pid", async () => {
        const handle = await sandbox.commands.run("sleep 300", { background: true, timeoutMs: 0 });
        startedPids.add(handle.pid);
        const listed = (await sandbox.commands.list()).find((info) => info.pid === handle.pid);
        expect(listed?.args.join(" ")).toContain("sleep 300");
        expect(await sandbox.commands.kill(handle.pid)).toBe(true);
        await expect(handle.wait()).rejects.toMatchObject({ exitCode: -1 });
        expect(await sandbox.commands.kill(handle.pid)).toBe(false);
      });

      it("connects to a background command from another connection and reads its later output (drivers with commands.connect)", async (context) => {
        const other = await provider.connect(sandbox.sandboxId);
        if (!other.commands.connect) return context.skip();
        await sandbox.files.remove("connect-go");
        const handle = await sandbox.commands.run("echo first; while [ ! -f connect-go ]; do sleep 0.05; done; echo second; sleep 300", {
          background: true,
          timeoutMs: 0,
        });
        startedPids.add(handle.pid);
        const { lines, matched, listener } = lineCollector(/^second/);
        const connected = await other.commands.connect(handle.pid, { onStdout: listener });
        expect(connected.pid).toBe(handle.pid);
        await sandbox.files.write("connect-go", "");
        await matched;
        expect(lines).toContain("second\n");

        expect(await connected.kill()).toBe(true);
        await expect(connected.wait()).rejects.toBeInstanceOf(CommandExitError);
        await expectGone([handle.pid]);
      });

      it("times out foreground and background commands", async () => {
        await expect(sandbox.commands.run("sleep 30", { timeoutMs: 200 })).rejects.toBeInstanceOf(SandboxTimeoutError);
        // The timeout also bounds the start request (E2B semantics): room for a loaded machine to start it.
        const handle = await sandbox.commands.run("sleep 120", { background: true, timeoutMs: 5_000 });
        startedPids.add(handle.pid);
        await expect(handle.wait()).rejects.toBeInstanceOf(SandboxTimeoutError);
      });
    });

    describe("lifecycle", () => {
      it("creates the app from the template as a clean git repository with one commit", async () => {
        expect(await sandbox.files.exists(`${APP_DIR}/app/_layout.tsx`)).toBe(true);
        const log = await sandbox.commands.run("git rev-list --count HEAD && git status --porcelain", { cwd: APP_DIR });
        expect(log.stdout).toBe("1\n");
      });

      it("gives a host for a port and keeps a reserved port", async () => {
        expect(sandbox.getHost(4321)).toContain("4321");
        const port = await sandbox.reservePort("contract", 4000);
        expect(await sandbox.reservePort("contract", 4000)).toBe(port);
      });

      it("restarts: processes end, every file stays (uncommitted, untracked, ignored), a stale git lock goes", async () => {
        await sandbox.files.write(`${APP_DIR}/tracked.txt`, "committed");
        await sandbox.commands.run("git add tracked.txt && git commit -q -m 'Add tracked file'", { cwd: APP_DIR });
        const kept = {
          "tracked.txt": "uncommitted edit",
          ".env.local": "EXPO_PUBLIC_CONVEX_URL=https://example.invalid\n",
          "untracked.txt": "scratch",
          "dist/bundle.js": "built",
          "node_modules/dep/index.js": "module.exports = 1;",
        };
        await sandbox.files.write([
          ...Object.entries(kept).map(([name, data]) => ({ path: `${APP_DIR}/${name}`, data })),
          // What a git command killed mid-way leaves behind.
          { path: `${APP_DIR}/.git/index.lock`, data: "" },
        ]);
        const { matched, listener } = lineCollector(/^child:/);
        const handle = await sandbox.commands.run("sleep 300 & echo child:$!; wait", {
          background: true,
          timeoutMs: 0,
          onStdout: listener,
        });
        const childPid = Number((await matched).slice("child:".length));
        startedPids.add(handle.pid).add(childPid);

        await sandbox.restart();

        expect(await sandbox.commands.list()).toEqual([]);
        await expectGone([handle.pid, childPid]);
        await expect(handle.wait()).rejects.toBeInstanceOf(CommandExitError);
        for (const [name, data] of Object.entries(kept)) expect(await sandbox.files.read(`${APP_DIR}/${name}`), name).toBe(data);
        expect(await sandbox.files.exists(`${APP_DIR}/.git/index.lock`)).toBe(false);
        // git works again: the edit can be committed (and is, so later tests see a clean tree).
        await sandbox.commands.run("git commit -q -am 'Keep the edit'", { cwd: APP_DIR });
        expect(await sandbox.files.read(`${APP_DIR}/tracked.txt`)).toBe("uncommitted edit");
      });

      it("connects to an existing sandbox and refuses unknown ids", async () => {
        const again = await provider.connect(sandbox.sandboxId);
        expect(again.sandboxId).toBe(sandbox.sandboxId);
        expect(await again.files.read(`${APP_DIR}/tracked.txt`)).toBe("uncommitted edit");
        await expect(provider.connect("no-such-sandbox")).rejects.toBeInstanceOf(SandboxNotFoundError);
      });

      it("kills a sandbox: its processes end and it cannot be connected to", async () => {
        const doomed = await provider.create();
        const handle = await doomed.commands.run("sleep 300", { background: true, timeoutMs: 0 });
        startedPids.add(handle.pid);
        expect(await provider.kill(doomed.sandboxId)).toBe(true);
        await expectGone([handle.pid]);
        await expect(provider.connect(doomed.sandboxId)).rejects.toBeInstanceOf(SandboxNotFoundError);
        expect(await provider.kill(doomed.sandboxId)).toBe(false);
      });
    });
  });
}
