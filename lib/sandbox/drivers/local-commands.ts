import fs from "node:fs/promises";
import { FileNotFoundError, InvalidArgumentError } from "../errors";
import { SANDBOX_HOME, type CommandHandle, type CommandResult, type CommandStartOptions, type ProcessInfo, type SandboxCommands } from "../port";
import { LocalProcess } from "./local-command-handle";
import { getCommandHost } from "./local-command-host";
import type { SandboxPaths } from "./local-paths";
import { findProcessesWithEnv, isProcessAlive, killProcess, killProcessGroup, waitUntilGone, type MarkedProcess } from "./local-os-processes";

/** E2B's default command timeout, for foreground and background commands alike. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/**
 * Variable every command of a local sandbox carries (E2B sets `E2B_SANDBOX_ID` likewise).
 * Descendants inherit it, so it finds processes that left their process group or were started
 * by an earlier server process.
 */
export const SANDBOX_ID_VARIABLE = "SANDBOX_ID";

/**
 * Variable every command of a local sandbox carries with its owner, `<server pid>:<driver
 * instance>`: another server process on the same sandboxes (a second instance) tells the
 * commands of a live owner, which it never stops, from orphans of a dead (or replaced) one.
 */
export const OWNER_VARIABLE = "SANDBOX_OWNER";

/** A new owner mark of this server process, for one driver instance. */
export const newCommandOwner = (): string => `${process.pid}:${crypto.randomUUID()}`;

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
    /** {@link newCommandOwner} of the driver instance. */
    private readonly owner: string,
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

  /**
   * This process's commands, and the commands another live server process started in the
   * sandbox (their envs are the whole environment they run with), so that a dev server another
   * instance runs counts as running here too.
   */
  async list(): Promise<ProcessInfo[]> {
    const marked = await this.markedProcesses();
    const pids = new Set(marked.map((found) => found.pid));
    // A command's own children carry the marker too: only those whose parent does not are commands.
    const foreign = (await this.ownedElsewhere(marked)).filter((found) => !pids.has(found.ppid));
    return [
      ...[...this.running.values()].map((command) => command.info),
      ...foreign.map((found) => ({ pid: found.pid, cmd: found.cmdline, args: [], envs: found.env })),
    ];
  }

  /** Kills a command this process started; another server process's commands are never killed (false). */
  async kill(pid: number): Promise<boolean> {
    return (await this.running.get(pid)?.kill()) ?? false;
  }

  /**
   * Ends what runs in the sandbox with no live server process behind it: what an earlier (or a
   * killed) server process started and what escaped it. The commands of another live server
   * process (another instance owning a dev server here) go on.
   */
  async killOrphans(): Promise<void> {
    const marked = await this.markedProcesses();
    const elsewhere = new Set((await this.ownedElsewhere(marked)).map((found) => found.pid));
    const orphans = marked.filter((found) => !elsewhere.has(found.pid) && !this.isOwn(found)).map((found) => found.pid);
    for (const pid of orphans) killProcess(pid);
    await waitUntilGone(orphans, []);
  }

  /**
   * Ends every process of the sandbox and waits until they are gone: the tracked commands with
   * their process groups, and (on Linux) anything else carrying the sandbox's variable.
   */
  async killAll(): Promise<void> {
    const tracked = [...this.running.values()];
    for (const command of tracked) killProcessGroup(command.pid);
    const strays = (await this.markedProcesses()).map((found) => found.pid);
    for (const pid of strays) killProcess(pid);
    await Promise.all(tracked.map((command) => command.done.catch(() => undefined)));
    await waitUntilGone(strays, tracked.map((command) => command.pid));
  }

  private markedProcesses(): Promise<MarkedProcess[]> {
    return findProcessesWithEnv(`${SANDBOX_ID_VARIABLE}=${this.sandboxId}`);
  }

  private isOwn(found: MarkedProcess): boolean {
    return found.env[OWNER_VARIABLE] === this.owner;
  }

  /**
   * Those of `marked` that another live server process started. One of this process's earlier
   * driver instances (replaced, as after a restart) is not a live owner.
   */
  private async ownedElsewhere(marked: MarkedProcess[]): Promise<MarkedProcess[]> {
    const servers = new Map<number, Promise<boolean>>();
    const alive = (pid: number) => {
      if (!servers.has(pid)) servers.set(pid, pid === process.pid ? Promise.resolve(false) : isProcessAlive(pid));
      return servers.get(pid)!;
    };
    const checked = await Promise.all(
      marked.map(async (found) => {
        const pid = /^(\d+):/.exec(found.env[OWNER_VARIABLE] ?? "")?.[1];
        return pid !== undefined && (await alive(Number(pid)));
      }),
    );
    return marked.filter((_, index) => checked[index]);
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
      [OWNER_VARIABLE]: this.owner,
    };
  }
}
