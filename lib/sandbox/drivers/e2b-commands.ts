import type { CommandHandle as E2BCommandHandle, Sandbox as E2BSandbox } from "e2b";
import { createLineSplitter, deliverLine, type LineSplitter } from "../lines";
import type { CommandHandle, CommandResult, CommandStartOptions, OutputListener, ProcessInfo, SandboxCommands } from "../port";
import { callE2B, fromE2BError } from "./e2b-errors";

/** The SDK's own default, passed explicitly so both drivers document the same number. */
const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

const toResult = (result: { exitCode: number; error?: string; stdout: string; stderr: string }): CommandResult => ({
  exitCode: result.exitCode,
  ...(result.error ? { error: result.error } : {}),
  stdout: result.stdout,
  stderr: result.stderr,
});

/**
 * Kills a process and all its descendants: E2B's own kill signals one pid, which would leave a
 * dev server's children (`npx` → `node`) running and holding the port. Each process is stopped
 * before its children are listed, so nothing can start a new child meanwhile.
 */
export const killTreeScript = (pid: number): string =>
  `kill_tree() { kill -STOP "$1" 2>/dev/null; for child in $(pgrep -P "$1"); do kill_tree "$child"; done; kill -KILL "$1" 2>/dev/null; }; kill_tree ${pid}; true`;

/** The SDK delivers arbitrary chunks; the port promises whole lines. */
const lineSplitterFor = (listener: OutputListener | undefined): LineSplitter | undefined =>
  listener ? createLineSplitter((line) => deliverLine(listener, line)) : undefined;

/** A background command of the E2B driver: the SDK handle, with port errors and whole lines. */
class E2BBackgroundCommand implements CommandHandle {
  private readonly done: Promise<CommandResult>;

  constructor(
    private readonly handle: E2BCommandHandle,
    splitters: (LineSplitter | undefined)[],
    private readonly killTree: (pid: number) => Promise<boolean>,
  ) {
    this.done = handle
      .wait()
      .then(toResult, (error: unknown) => {
        throw fromE2BError(error);
      })
      .finally(() => splitters.forEach((splitter) => splitter?.end()));
    // Flushes the last partial line even when nobody waits; wait() still reports the outcome.
    this.done.catch(() => undefined);
  }

  get pid(): number {
    return this.handle.pid;
  }

  get stdout(): string {
    return this.handle.stdout;
  }

  get stderr(): string {
    return this.handle.stderr;
  }

  get exitCode(): number | undefined {
    return this.handle.exitCode;
  }

  wait(): Promise<CommandResult> {
    return this.done;
  }

  kill(): Promise<boolean> {
    return this.killTree(this.handle.pid);
  }

  disconnect(): Promise<void> {
    return callE2B(() => this.handle.disconnect());
  }
}

/** `sandbox.commands` over the E2B SDK's `Commands`. */
export class E2BCommands implements SandboxCommands {
  constructor(private readonly sdk: E2BSandbox) {}

  run(cmd: string, options?: CommandStartOptions & { background?: false }): Promise<CommandResult>;
  run(cmd: string, options: CommandStartOptions & { background: true }): Promise<CommandHandle>;
  async run(cmd: string, options: CommandStartOptions = {}): Promise<CommandResult | CommandHandle> {
    const stdout = lineSplitterFor(options.onStdout);
    const stderr = lineSplitterFor(options.onStderr);
    const sdkOptions = {
      cwd: options.cwd,
      envs: options.envs,
      timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      onStdout: stdout ? (data: string) => stdout.write(data) : undefined,
      onStderr: stderr ? (data: string) => stderr.write(data) : undefined,
    };
    if (options.background) {
      const handle = await callE2B(() => this.sdk.commands.run(cmd, { ...sdkOptions, background: true }));
      return new E2BBackgroundCommand(handle, [stdout, stderr], (pid) => this.kill(pid));
    }
    try {
      return toResult(await callE2B(() => this.sdk.commands.run(cmd, { ...sdkOptions, background: false })));
    } finally {
      stdout?.end();
      stderr?.end();
    }
  }

  async connect(pid: number, options: Pick<CommandStartOptions, "onStdout" | "onStderr">): Promise<CommandHandle> {
    const stdout = lineSplitterFor(options.onStdout);
    const stderr = lineSplitterFor(options.onStderr);
    const handle = await callE2B(() =>
      this.sdk.commands.connect(pid, {
        // No timeout: the command is a long-running server.
        timeoutMs: 0,
        onStdout: stdout ? (data: string) => stdout.write(data) : undefined,
        onStderr: stderr ? (data: string) => stderr.write(data) : undefined,
      }),
    );
    return new E2BBackgroundCommand(handle, [stdout, stderr], (target) => this.kill(target));
  }

  async list(): Promise<ProcessInfo[]> {
    const processes = await callE2B(() => this.sdk.commands.list());
    return processes.map(({ pid, cmd, args, envs, cwd }) => ({ pid, cmd, args, envs, cwd }));
  }

  /** Kills the process with its descendants; `false` when no such process runs. */
  async kill(pid: number): Promise<boolean> {
    if (!(await this.list()).some((info) => info.pid === pid)) return false;
    // A template without pgrep still gets the SDK's kill of the process itself.
    await this.run(killTreeScript(pid)).catch(() => undefined);
    await callE2B(() => this.sdk.commands.kill(pid));
    return true;
  }

  /** Kills every process the sandbox's agent lists (there is no process-group call). */
  async killAll(): Promise<void> {
    const processes = await this.list();
    await Promise.all(processes.map(({ pid }) => this.kill(pid)));
  }
}
