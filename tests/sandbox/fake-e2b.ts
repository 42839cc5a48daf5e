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
