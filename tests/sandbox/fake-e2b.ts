import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { setTimeout as delay } from "node:timers/promises";
import type { E2BLib } from "@/lib/sandbox/drivers/e2b";

/** An error shaped like the SDK's: the driver maps SDK errors by `name`. */
export class FakeSdkError extends Error {
  constructor(name: string, message: string, fields: Record<string, unknown> = {}) {
    super(message);
    this.name = name;
    Object.assign(this, fields);
  }
}

/** What a scripted command does: output chunks, then an exit code or an SDK error. */
export interface FakeCommandScript {
  stdout?: string[];
  stderr?: string[];
  exitCode?: number;
  error?: FakeSdkError;
}

type StartOptions = {
  background?: boolean;
  cwd?: string;
  envs?: Record<string, string>;
  timeoutMs?: number;
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
};

/** In-memory stand-in for the SDK's `Sandbox`: files in a map, commands answered by a script (the scripted mode). */
export class FakeSdkSandbox {
  static created: { opts: unknown }[] = [];
  static killed: string[] = [];
  static instances = new Map<string, FakeSdkSandbox>();
  /** Answers every command; tests replace it. */
  static script: (cmd: string, opts: StartOptions) => FakeCommandScript = () => ({ exitCode: 0 });

  readonly files = new FakeFiles();
  readonly commandLog: { cmd: string; opts: StartOptions }[] = [];
  readonly running = new Map<number, { cmd: string; envs: Record<string, string>; finish: (exitCode: number) => void }>();
  private nextPid = 100;
  readonly commands = {
    run: (cmd: string, opts: StartOptions = {}) => this.run(cmd, opts),
    list: async () => [...this.running].map(([pid, entry]) => ({ pid, cmd: "/bin/bash", args: ["-l", "-c", entry.cmd], envs: entry.envs })),
    kill: async (pid: number) => {
      const entry = this.running.get(pid);
      entry?.finish(-1);
      return entry !== undefined;
    },
  };

  constructor(readonly sandboxId: string) {}

  static async create(opts: unknown) {
    FakeSdkSandbox.created.push({ opts });
    const sandbox = new FakeSdkSandbox(`fake${FakeSdkSandbox.instances.size + 1}`);
    FakeSdkSandbox.instances.set(sandbox.sandboxId, sandbox);
    return sandbox;
  }

  static async connect(sandboxId: string) {
    const sandbox = FakeSdkSandbox.instances.get(sandboxId);
    if (!sandbox) throw new FakeSdkError("SandboxNotFoundError", `Sandbox ${sandboxId} not found`);
    return sandbox;
  }

  static async kill(sandboxId: string) {
    FakeSdkSandbox.killed.push(sandboxId);
    return FakeSdkSandbox.instances.delete(sandboxId);
  }

  static reset() {
    FakeSdkSandbox.created = [];
    FakeSdkSandbox.killed = [];
    FakeSdkSandbox.instances.clear();
    FakeSdkSandbox.script = () => ({ exitCode: 0 });
  }

  getHost(port: number) {
    return `${port}-${this.sandboxId}.e2b.app`;
  }

  private async run(cmd: string, opts: StartOptions) {
    this.commandLog.push({ cmd, opts });
    const script = FakeSdkSandbox.script(cmd, opts);
    const output = { stdout: "", stderr: "" };
    const emit = () => {
      for (const chunk of script.stdout ?? []) {
        output.stdout += chunk;
        opts.onStdout?.(chunk);
      }
      for (const chunk of script.stderr ?? []) {
        output.stderr += chunk;
        opts.onStderr?.(chunk);
      }
    };
    const settle = (exitCode: number) => {
      if (script.error) throw script.error;
      const result = { exitCode, ...output };
      if (exitCode !== 0) throw new FakeSdkError("CommandExitError", `exit ${exitCode}`, { ...result, error: undefined });
      return result;
    };
    if (!opts.background) {
      emit();
      return settle(script.exitCode ?? 0);
    }
    const pid = this.nextPid++;
    let finish!: (exitCode: number) => void;
    const ended = new Promise<number>((resolve) => (finish = resolve));
    this.running.set(pid, { cmd, envs: opts.envs ?? {}, finish });
    const wait = ended.then((exitCode) => (this.running.delete(pid), settle(exitCode)));
    emit();
    return {
      pid,
      get stdout() {
        return output.stdout;
      },
      get stderr() {
        return output.stderr;
      },
      exitCode: undefined,
      wait: () => wait,
      kill: async () => (finish(-1), true),
      disconnect: async () => undefined,
    };
  }
}

class FakeFiles {
  readonly content = new Map<string, Uint8Array>();
  readonly readFormats: (string | undefined)[] = [];

  async read(path: string, opts?: { format?: string }) {
    this.readFormats.push(opts?.format);
    const bytes = this.content.get(path);
    if (!bytes) throw new FakeSdkError("FileNotFoundError", `file ${path} not found`);
    return opts?.format === "bytes" ? bytes : Buffer.from(bytes).toString("utf8");
  }

  async write(target: string | { path: string; data: string | ArrayBuffer }[], data?: string | ArrayBuffer) {
    const entries = Array.isArray(target) ? target : [{ path: target, data: data! }];
    const infos = entries.map((entry) => {
      if (!(typeof entry.data === "string" || entry.data instanceof ArrayBuffer)) throw new Error("SDK takes string or ArrayBuffer");
      this.content.set(entry.path, typeof entry.data === "string" ? Buffer.from(entry.data) : new Uint8Array(entry.data));
      return { name: entry.path.split("/").pop()!, path: entry.path, type: "file" };
    });
    return Array.isArray(target) ? infos : infos[0];
  }

  async list(path: string) {
    if (![...this.content.keys()].some((key) => key.startsWith(`${path}/`))) throw new FakeSdkError("NotFoundError", "dir not found");
    return [...this.content]
      .filter(([key]) => key.startsWith(`${path}/`) && !key.slice(path.length + 1).includes("/"))
      .map(([key, bytes]) => ({ name: key.split("/").pop()!, path: key, type: "file", size: bytes.length, modifiedTime: new Date(0) }));
  }

  async exists(path: string) {
    return [...this.content.keys()].some((key) => key === path || key.startsWith(`${path}/`));
  }

  async makeDir() {
    return true;
  }

  async remove(path: string) {
    this.content.delete(path);
  }
}

/** The fake as the driver's `lib` option. */
export const fakeE2BLib = { Sandbox: FakeSdkSandbox } as unknown as E2BLib;

/**
 * The second mode of the fake: sandboxes that behave like real E2B ones as far as the driver uses
 * them, so the sandbox contract can run against the E2B driver. Each sandbox is a temporary host
 * directory standing for the sandbox's `/`; the files API works on it and `commands.run` runs a
 * real `bash -lc` in it. Commands and environment values see `/home/user` rewritten to the host
 * directory and their output rewritten back, so `pwd` answers sandbox paths as on E2B. Process
 * ids are real host pids (the driver's kill script and the contract's process checks use them).
 * A test double only: nothing outside tests/ imports it.
 */

const SDK_HOME = "/home/user";
/** `/home/user` as a whole path segment in command text. */
const SDK_HOME_IN_TEXT = /\/home\/user(?![\w.-])/g;
/** How long output that a command's leftover children hold open is still read after it exited. */
const OUTPUT_GRACE_MS = 100;

type SdkFileData = string | ArrayBuffer;

interface SdkEntry {
  name: string;
  path: string;
  type: "file" | "dir";
  size: number;
  modifiedTime: Date;
}

interface DirectoryCommand {
  cmd: string;
  cwd: string;
  envs: Record<string, string>;
  child: ChildProcess & { pid: number };
  output: { stdout: string; stderr: string };
  /** Who receives its output: the starting call's options and those of every `connect`. */
  listeners: Pick<StartOptions, "onStdout" | "onStderr">[];
  exitCode: number | undefined;
  timedOut: boolean;
  /** Settles with the exit code once the process exited and its output was read. */
  ended: Promise<number>;
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Kills a command's process group (it leads its own); gone already is fine. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch (error) {
    if (errorCode(error) !== "ESRCH") throw error;
  }
}

class DirectorySdkSandbox {
  readonly running = new Map<number, DirectoryCommand>();
  readonly files: DirectoryFiles;
  readonly commands = {
    run: (cmd: string, opts: StartOptions = {}) => this.run(cmd, opts),
    list: async () =>
      [...this.running.values()].map((entry) => ({
        pid: entry.child.pid,
        cmd: "/bin/bash",
        args: ["-l", "-c", entry.cmd],
        envs: entry.envs,
        cwd: entry.cwd,
      })),
    kill: (pid: number) => this.kill(pid),
    connect: async (pid: number, opts: Pick<StartOptions, "onStdout" | "onStderr" | "timeoutMs"> = {}) => {
      const entry = this.running.get(pid);
      if (!entry) throw new FakeSdkError("NotFoundError", `process with pid ${pid} not found`);
      this.connections.push(pid);
      entry.listeners.push(opts);
      return this.handleOf(entry, opts, this.settledOf(entry, opts));
    },
  };
  /** Pids that `commands.connect` attached to, in order. */
  readonly connections: number[] = [];

  /** @param root real host path standing for the sandbox's `/` */
  constructor(
    readonly sandboxId: string,
    readonly root: string,
  ) {
    this.files = new DirectoryFiles(root);
  }

  get hostHome(): string {
    return path.join(this.root, SDK_HOME);
  }

  getHost(port: number) {
    return `${port}-${this.sandboxId}.e2b.app`;
  }

  /** Ends every command, as when E2B kills the sandbox. */
  async killAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((pid) => this.kill(pid)));
  }

  private toHostText(text: string): string {
    return text.replace(SDK_HOME_IN_TEXT, () => this.hostHome);
  }

  private toSandboxText(text: string): string {
    return text.split(this.hostHome).join(SDK_HOME);
  }

  private async kill(pid: number): Promise<boolean> {
    const entry = this.running.get(pid);
    if (!entry) return false;
    killGroup(pid);
    await entry.ended;
    return true;
  }

  private async run(cmd: string, opts: StartOptions) {
    const cwd = path.posix.resolve(SDK_HOME, opts.cwd ?? SDK_HOME);
    const envs = opts.envs ?? {};
    const entry = await this.spawn(cmd, cwd, envs, opts);
    const settled = this.settledOf(entry, opts);
    if (!opts.background) return settled;
    return this.handleOf(entry, opts, settled);
  }

  /** Like the SDK: a non-zero exit or a timeout rejects wait() (and a foreground run). */
  private settledOf(entry: DirectoryCommand, opts: Pick<StartOptions, "timeoutMs">) {
    const result = () => ({ exitCode: entry.exitCode!, ...entry.output });
    return entry.ended.then((exitCode) => {
      if (entry.timedOut) throw new FakeSdkError("TimeoutError", `command timed out after ${opts.timeoutMs} ms`);
      if (exitCode !== 0) throw new FakeSdkError("CommandExitError", `exit status ${exitCode}`, { ...result(), error: undefined });
      return result();
    });
  }

  /** The SDK's handle of a background command, for the call that started it or connected to it. */
  private handleOf(entry: DirectoryCommand, opts: Pick<StartOptions, "onStdout" | "onStderr">, settled: Promise<unknown>) {
    settled.catch(() => undefined);
    return {
      pid: entry.child.pid,
      get stdout() {
        return entry.output.stdout;
      },
      get stderr() {
        return entry.output.stderr;
      },
      get exitCode() {
        return entry.exitCode;
      },
      wait: () => settled,
      kill: () => this.kill(entry.child.pid),
      disconnect: async () => {
        opts.onStdout = undefined;
        opts.onStderr = undefined;
      },
    };
  }

  private async spawn(cmd: string, cwd: string, envs: Record<string, string>, opts: StartOptions): Promise<DirectoryCommand> {
    const hostEnvs = Object.fromEntries(Object.entries(envs).map(([name, value]) => [name, this.toHostText(value)]));
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: this.hostHome, USER: "user", ...hostEnvs };
    const child = spawn("bash", ["-lc", this.toHostText(cmd)], {
      cwd: path.join(this.root, cwd),
      env: env as NodeJS.ProcessEnv,
      // Its own process group, so a kill reaches what the command started.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    const output = { stdout: "", stderr: "" };
    const stream = (readable: Readable, key: "stdout" | "stderr", deliver: (data: string) => void) => {
      // One decoder per stream: a character split between reads arrives whole, as from the SDK.
      const decoder = new StringDecoder("utf8");
      readable.on("data", (chunk: Buffer) => {
        const text = this.toSandboxText(decoder.write(chunk));
        if (!text) return;
        output[key] += text;
        deliver(text);
      });
    };
    const listeners: Pick<StartOptions, "onStdout" | "onStderr">[] = [opts];
    stream(child.stdout!, "stdout", (text) => listeners.forEach((listener) => listener.onStdout?.(text)));
    stream(child.stderr!, "stderr", (text) => listeners.forEach((listener) => listener.onStderr?.(text)));
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? -1)));
    const entry: DirectoryCommand = {
      cmd,
      cwd,
      envs,
      child: child as ChildProcess & { pid: number },
      output,
      listeners,
      exitCode: undefined,
      timedOut: false,
      ended: exited.then(async (exitCode) => {
        await Promise.race([closed, delay(OUTPUT_GRACE_MS)]);
        clearTimeout(timer);
        entry.exitCode = exitCode;
        this.running.delete(child.pid!);
        return exitCode;
      }),
    };
    const timer =
      opts.timeoutMs && opts.timeoutMs > 0
        ? setTimeout(() => {
            entry.timedOut = true;
            killGroup(child.pid!);
          }, opts.timeoutMs)
        : undefined;
    this.running.set(child.pid!, entry);
    return entry;
  }
}

/** The SDK's `Filesystem` over the sandbox's host directory. */
class DirectoryFiles {
  constructor(private readonly root: string) {}

  /** Absolute sandbox path (relative ones from the home directory, as in E2B) and its host path. */
  private locate(sandboxPath: string): { path: string; host: string } {
    const absolute = path.posix.resolve(SDK_HOME, sandboxPath);
    return { path: absolute, host: path.join(this.root, absolute) };
  }

  private notFound(sandboxPath: string, error: unknown): never {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") {
      throw new FakeSdkError("FileNotFoundError", `path '${sandboxPath}' does not exist`);
    }
    throw error;
  }

  async read(sandboxPath: string, opts?: { format?: string }) {
    const bytes = await fs.readFile(this.locate(sandboxPath).host).catch((error: unknown) => this.notFound(sandboxPath, error));
    return opts?.format === "bytes" ? new Uint8Array(bytes) : bytes.toString("utf8");
  }

  async write(target: string | { path: string; data: SdkFileData }[], data?: SdkFileData) {
    const entries = Array.isArray(target) ? target : [{ path: target, data: data! }];
    const infos = [];
    for (const entry of entries) {
      if (!(typeof entry.data === "string" || entry.data instanceof ArrayBuffer)) throw new Error("SDK takes string or ArrayBuffer");
      const { path: absolute, host } = this.locate(entry.path);
      await fs.mkdir(path.dirname(host), { recursive: true });
      await fs.writeFile(host, typeof entry.data === "string" ? entry.data : Buffer.from(entry.data));
      infos.push({ name: path.posix.basename(absolute), path: absolute, type: "file" });
    }
    return Array.isArray(target) ? infos : infos[0];
  }

  /** Entries sorted by name, as envd lists them; `depth` levels deep. */
  async list(sandboxPath: string, opts: { depth?: number } = {}): Promise<SdkEntry[]> {
    const { path: absolute, host } = this.locate(sandboxPath);
    const dirents = await fs.readdir(host, { withFileTypes: true }).catch((error: unknown) => this.notFound(sandboxPath, error));
    const entries: SdkEntry[] = [];
    for (const dirent of dirents.sort((a, b) => a.name.localeCompare(b.name))) {
      const childPath = path.posix.join(absolute, dirent.name);
      const stat = await fs.stat(path.join(host, dirent.name));
      const type = stat.isDirectory() ? ("dir" as const) : ("file" as const);
      entries.push({ name: dirent.name, path: childPath, type, size: stat.size, modifiedTime: stat.mtime });
      if (type === "dir" && (opts.depth ?? 1) > 1) entries.push(...(await this.list(childPath, { depth: (opts.depth ?? 1) - 1 })));
    }
    return entries;
  }

  async exists(sandboxPath: string) {
    return fs.lstat(this.locate(sandboxPath).host).then(
      () => true,
      () => false,
    );
  }

  async makeDir(sandboxPath: string) {
    const { host } = this.locate(sandboxPath);
    if (await this.exists(sandboxPath)) return false;
    await fs.mkdir(host, { recursive: true });
    return true;
  }

  async remove(sandboxPath: string) {
    await fs.rm(this.locate(sandboxPath).host, { recursive: true, force: true });
  }
}

/**
 * The directory-backed fake as the driver's `lib` option: every sandbox it creates is a new
 * directory under `root`, with `/home/user` made.
 */
export function directoryE2BLib(root: string): E2BLib {
  const sandboxes = new Map<string, DirectorySdkSandbox>();
  class DirectorySdk {
    static async create() {
      await fs.mkdir(root, { recursive: true });
      const sandboxId = `dir${crypto.randomBytes(6).toString("hex")}`;
      const sandboxRoot = path.join(await fs.realpath(root), sandboxId);
      await fs.mkdir(path.join(sandboxRoot, SDK_HOME), { recursive: true });
      const sandbox = new DirectorySdkSandbox(sandboxId, sandboxRoot);
      sandboxes.set(sandboxId, sandbox);
      return sandbox;
    }

    static async connect(sandboxId: string) {
      const sandbox = sandboxes.get(sandboxId);
      if (!sandbox) throw new FakeSdkError("SandboxNotFoundError", `Sandbox ${sandboxId} not found`);
      return sandbox;
    }

    static async kill(sandboxId: string) {
      const sandbox = sandboxes.get(sandboxId);
      if (!sandbox) return false;
      sandboxes.delete(sandboxId);
      await sandbox.killAll();
      await fs.rm(sandbox.root, { recursive: true, force: true });
      return true;
    }
  }
  return { Sandbox: DirectorySdk } as unknown as E2BLib;
}
