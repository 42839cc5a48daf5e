import fs from "node:fs/promises";
import { FileNotFoundError, InvalidArgumentError } from "../errors";
import { SANDBOX_HOME, type CommandHandle, type CommandResult, type CommandStartOptions, type ProcessInfo, type SandboxCommands } from "../port";
import { LocalProcess } from "./local-command-handle";
import { getCommandHost } from "./local-command-host";
import type { SandboxPaths } from "./local-paths";
import { findProcessesByEnv, killProcess, killProcessGroup, waitUntilGone } from "./local-os-processes";

/** E2B's default command timeout, for foreground and background commands alike. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/**
 * Variable every command of a local sandbox carries (E2B sets `E2B_SANDBOX_ID` likewise).
 * Descendants inherit it, so it finds processes that left their process group or were started
 * by an earlier server process.
 */
export const SANDBOX_ID_VARIABLE = "SANDBOX_ID";

/** Host variables a command may see; everything else (tokens, keys, DATABASE_URL) stays out. */
const INHERITED_VARIABLES = ["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"];

/**
 * `sandbox.commands` of the local driver. Running commands are tracked in memory, per server
 * process: they survive the HTTP request that started them, not the server.
 */
export class LocalCommands implements SandboxCommands {
  private readonly running = new Map<number, LocalProcess>();

  constructor(
    private readonly sandboxId: string,
    private readonly paths: SandboxPaths,
    private readonly baseEnv: Record<string, string> = {},
  ) {}

  run(cmd: string, options?: CommandStartOptions & { background?: false }): Promise<CommandResult>;
  run(cmd: string, options: CommandStartOptions & { background: true }): Promise<CommandHandle>;
  async run(cmd: string, options: CommandStartOptions = {}): Promise<CommandResult | CommandHandle> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0) throw new InvalidArgumentError("timeoutMs must be a non-negative integer.");
    const cwd = this.paths.normalize(options.cwd ?? SANDBOX_HOME);
    const hostCwd = await this.paths.resolve(cwd);
    if (!(await fs.stat(hostCwd).then((stat) => stat.isDirectory(), () => false))) throw new FileNotFoundError(cwd);
    const envs = options.envs ?? {};

    const command = await LocalProcess.start(
      {
        cmd,
        hostCmd: this.paths.toHostText(cmd),
        cwd,
        hostCwd,
        envs,
        env: this.environment(envs),
        timeoutMs,
        capOutput: options.background === true,
        mapLine: (line) => this.paths.toSandboxText(line),
        onStdout: options.onStdout,
        onStderr: options.onStderr,
      },
      getCommandHost(),
    );
    this.running.set(command.pid, command);
    command.done.finally(() => this.running.delete(command.pid)).catch(() => undefined);
    return options.background ? command : command.wait();
  }

  async list(): Promise<ProcessInfo[]> {
    return [...this.running.values()].map((command) => command.info);
  }

  async kill(pid: number): Promise<boolean> {
    return (await this.running.get(pid)?.kill()) ?? false;
  }

  /**
   * Ends every process of the sandbox and waits until they are gone: the tracked commands with
   * their process groups, and (on Linux) anything else carrying the sandbox's variable.
   */
  async killAll(): Promise<void> {
    const tracked = [...this.running.values()];
    for (const command of tracked) killProcessGroup(command.pid);
    const strays = await findProcessesByEnv(`${SANDBOX_ID_VARIABLE}=${this.sandboxId}`);
    for (const pid of strays) killProcess(pid);
    await Promise.all(tracked.map((command) => command.done.catch(() => undefined)));
    await waitUntilGone(strays, tracked.map((command) => command.pid));
  }

  private environment(envs: Record<string, string>): Record<string, string> {
    const inherited = Object.fromEntries(
      INHERITED_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name] as string]] : [])),
    );
    const mapped = Object.fromEntries(Object.entries(envs).map(([name, value]) => [name, this.paths.toHostText(value)]));
    return {
      LANG: "C.UTF-8",
      ...inherited,
      HOME: this.paths.commandHome,
      USER: "user",
      ...this.baseEnv,
      ...mapped,
      [SANDBOX_ID_VARIABLE]: this.sandboxId,
    };
  }
}
