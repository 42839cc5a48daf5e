import { CommandExitError, SandboxTimeoutError } from "../errors";
import { createLineSplitter, deliverLine, type LineSplitter } from "../lines";
import type { CommandHandle, CommandResult, OutputListener, ProcessInfo } from "../port";
import type { CommandHost } from "./local-command-host";
import { killProcessGroup } from "./local-os-processes";

/** How much output a long-running command keeps in memory (the rest streams to listeners). */
const RETAINED_OUTPUT_CHARS = 1024 * 1024;

/**
 * Every command runs under this bash supervisor, the leader of the command's process group. A
 * background job of it waits for end-of-file on the pipe the command host holds open as its
 * stdin; the pipe closes when the host dies, and the host dies with the server, however abruptly
 * (even SIGKILL), and the job then kills the whole group. So commands never outlive the service,
 * with no exit handler to rely on.
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
 * kill reaches everything it started), spawned by the command host, output split into lines, a
 * timeout, and a promise that settles like E2B's `CommandHandle.wait()`.
 */
export class LocalProcess implements CommandHandle {
  /** Settles once the command ended and its output was read; never rejects unobserved. */
  readonly done: Promise<CommandResult>;
  private processId = 0;
  private output = { stdout: "", stderr: "" };
  private result: CommandResult | undefined;
  private disconnected = false;
  private timedOut = false;
  private timeout: NodeJS.Timeout | undefined;
  private readonly splitters: Record<"stdout" | "stderr", LineSplitter>;
  private closed!: (code: number | null, signal: string | null) => void;

  private constructor(private readonly options: SpawnOptions) {
    this.splitters = { stdout: this.splitter("stdout", options.onStdout), stderr: this.splitter("stderr", options.onStderr) };
    this.done = new Promise<CommandResult>((resolve, reject) => {
      this.closed = (code, signal) => {
        clearTimeout(this.timeout);
        this.splitters.stdout.end();
        this.splitters.stderr.end();
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
      };
    });
    this.done.catch(() => undefined);
  }

  /** Starts the command; rejects when the process cannot be created. */
  static async start(options: SpawnOptions, host: CommandHost): Promise<LocalProcess> {
    const command = new LocalProcess(options);
    command.processId = await host.spawn(
      { file: "/bin/bash", args: ["-c", SUPERVISOR, "sandbox-command", options.hostCmd], cwd: options.hostCwd, env: options.env },
      {
        onOutput: (stream, chunk) => command.splitters[stream].write(chunk),
        onClose: (code, signal) => command.closed(code, signal),
      },
    );
    if (options.timeoutMs > 0 && !command.result) {
      command.timeout = setTimeout(() => {
        command.timedOut = true;
        killProcessGroup(command.pid);
      }, options.timeoutMs);
    }
    return command;
  }

  get pid(): number {
    return this.processId;
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

  private splitter(name: "stdout" | "stderr", listener: OutputListener | undefined): LineSplitter {
    return createLineSplitter((rawLine) => {
      const line = this.options.mapLine(rawLine);
      const kept = this.output[name] + line;
      // Trim only now and then: slicing a MiB on every line of a chatty dev server is wasteful.
      this.output[name] = this.options.capOutput && kept.length > 2 * RETAINED_OUTPUT_CHARS ? kept.slice(-RETAINED_OUTPUT_CHARS) : kept;
      if (!this.disconnected) deliverLine(listener, line);
    });
  }
}
