import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { CommandExitError, SandboxError, SandboxTimeoutError } from "../errors";
import { createLineSplitter, deliverLine, type LineSplitter } from "../lines";
import type { CommandHandle, CommandResult, OutputListener, ProcessInfo } from "../port";
import { killProcessGroup } from "./local-os-processes";

/** How much output a long-running command keeps in memory (the rest streams to listeners). */
const RETAINED_OUTPUT_CHARS = 1024 * 1024;

/**
 * After the command itself exited, how long to keep reading output that descendants still hold
 * open (`cmd &`): the result must not wait for a daemon the command left behind.
 */
const OUTPUT_GRACE_MS = 100;

/**
 * Every command runs under this bash supervisor, the leader of the command's process group. A
 * background job of it waits for end-of-file on the pipe this server holds open as its stdin;
 * the pipe closes when the server dies, however abruptly (even SIGKILL), and the job then kills
 * the whole group. So commands never outlive the service, with no exit handler to rely on.
 * The command itself gets /dev/null as stdin, as with E2B's default `stdin: false`.
 */
const SUPERVISOR = [
  "exec 3<&0 0</dev/null",
  "{ read -r _ <&3; kill -KILL 0; } >/dev/null 2>&1 &",
  "lifeline=$!",
  // Disowned: bash would otherwise report the job's death ("Killed") on the command's stderr.
  'disown "$lifeline"',
  'bash -c "$1" 3<&-',
  "status=$?",
  'kill -KILL "$lifeline" 2>/dev/null',
  'exit "$status"',
].join("\n");

export interface SpawnOptions {
  /** The command as the caller wrote it (reported by `commands.list`). */
  cmd: string;
  /** The command with sandbox paths rewritten to host paths. */
  hostCmd: string;
  hostCwd: string;
  /** Sandbox path of the working directory (reported by `commands.list`). */
  cwd: string;
  /** The caller's `envs` (reported by `commands.list`). */
  envs: Record<string, string>;
  /** The complete environment of the child. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Keep only the last MiB of output (long-running commands). */
  capOutput: boolean;
  /** Applied to every output line before it is kept or delivered (host → sandbox paths). */
  mapLine: (line: string) => string;
  onStdout?: OutputListener;
  onStderr?: OutputListener;
}

/**
 * One command run by the local driver: `bash -c` as the leader of its own process group (so a
 * kill reaches everything it started), output split into lines, a timeout, and a promise that
 * settles like E2B's `CommandHandle.wait()`.
 */
export class LocalProcess implements CommandHandle {
  readonly pid: number;
  /** Settles once the command ended and its output was read; never rejects unobserved. */
  readonly done: Promise<CommandResult>;
  private output = { stdout: "", stderr: "" };
  private result: CommandResult | undefined;
  private disconnected = false;
  private timedOut = false;

  private constructor(
    private readonly child: ChildProcess & { pid: number },
    private readonly options: SpawnOptions,
  ) {
    this.pid = child.pid;
    this.done = this.track();
    this.done.catch(() => undefined);
  }

  /** Starts the command; rejects when the process cannot be created. */
  static start(options: SpawnOptions): Promise<LocalProcess> {
    const child = spawn("/bin/bash", ["-c", SUPERVISOR, "sandbox-command", options.hostCmd], {
      cwd: options.hostCwd,
      // Next's types require NODE_ENV in ProcessEnv; a sandbox command deliberately lacks it.
      env: options.env as NodeJS.ProcessEnv,
      detached: true,
      // stdin is the supervisor's lifeline: never written to, closed only by this process's death.
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin?.on("error", () => undefined);
    if (child.pid === undefined) {
      return new Promise((_resolve, reject) =>
        child.once("error", (error) => reject(new SandboxError(`Could not start the command: ${error.message}`, { cause: error }))),
      );
    }
    return Promise.resolve(new LocalProcess(child as ChildProcess & { pid: number }, options));
  }

  get stdout(): string {
    return this.retained(this.output.stdout);
  }

  get stderr(): string {
    return this.retained(this.output.stderr);
  }

  get exitCode(): number | undefined {
    return this.result?.exitCode;
  }

  get info(): ProcessInfo {
    return { pid: this.pid, cmd: "/bin/bash", args: ["-c", this.options.cmd], envs: this.options.envs, cwd: this.options.cwd };
  }

  wait(): Promise<CommandResult> {
    return this.done;
  }

  async kill(): Promise<boolean> {
    if (this.result) return false;
    killProcessGroup(this.pid);
    await this.done.catch(() => undefined);
    return true;
  }

  async disconnect(): Promise<void> {
    this.disconnected = true;
  }

  private retained(text: string): string {
    return this.options.capOutput ? text.slice(-RETAINED_OUTPUT_CHARS) : text;
  }

  private track(): Promise<CommandResult> {
    const { child, options } = this;
    const splitters = [
      this.collect(child.stdout!, "stdout", options.onStdout),
      this.collect(child.stderr!, "stderr", options.onStderr),
    ];
    const timeout =
      options.timeoutMs > 0
        ? setTimeout(() => {
            this.timedOut = true;
            killProcessGroup(this.pid);
          }, options.timeoutMs)
        : undefined;
    child.once("exit", () => {
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, OUTPUT_GRACE_MS).unref();
    });
    return new Promise<CommandResult>((resolve, reject) => {
      child.once("close", (code, signal) => {
        clearTimeout(timeout);
        for (const splitter of splitters) splitter.end();
        const result: CommandResult = {
          exitCode: code ?? -1,
          ...(signal ? { error: `signal: ${signal}` } : {}),
          stdout: this.stdout,
          stderr: this.stderr,
        };
        this.result = result;
        if (this.timedOut) reject(new SandboxTimeoutError(`The command did not finish within ${options.timeoutMs} ms and was killed.`));
        else if (result.exitCode !== 0) reject(new CommandExitError(result));
        else resolve(result);
      });
    });
  }

  private collect(stream: Readable, name: "stdout" | "stderr", listener: OutputListener | undefined): LineSplitter {
    const splitter = createLineSplitter((rawLine) => {
      const line = this.options.mapLine(rawLine);
      const kept = this.output[name] + line;
      // Trim only now and then: slicing a MiB on every line of a chatty dev server is wasteful.
      this.output[name] = this.options.capOutput && kept.length > 2 * RETAINED_OUTPUT_CHARS ? kept.slice(-RETAINED_OUTPUT_CHARS) : kept;
      if (!this.disconnected) deliverLine(listener, line);
    });
    stream.on("data", (chunk: Buffer) => splitter.write(chunk));
    return splitter;
  }
}
