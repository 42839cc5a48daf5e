/**
 * The sandbox port: the operations the product needs from a remote code-execution container,
 * shaped after the E2B JS SDK v2 (`sandbox.files`, `sandbox.commands`, `getHost`). Paths are
 * POSIX paths inside the sandbox; relative ones resolve against {@link SANDBOX_HOME}.
 */

/** Home directory of the sandbox user; the local driver maps it to a host directory. */
export const SANDBOX_HOME = "/home/user";

/** Where the app (a git repository) lives inside every sandbox. */
export const APP_DIR = `${SANDBOX_HOME}/app`;

/**
 * `local`: the e2b driver on the local sandbox service (walled); `local-unwalled`: directories
 * and child processes of the server; `e2b`: E2B's cloud.
 */
export type SandboxDriverName = "local" | "local-unwalled" | "e2b";

export type EntryType = "file" | "dir" | "symlink";

/** A file or directory as reported by `files.write`. */
export interface WriteInfo {
  name: string;
  /** Absolute sandbox path. */
  path: string;
  type: EntryType;
}

/** A directory entry as reported by `files.list`. */
export interface EntryInfo extends WriteInfo {
  /** Size in bytes (of the link itself for symlinks). */
  size: number;
  modifiedTime?: Date;
}

/** Content accepted by `files.write`: text is written as UTF-8. */
export type FileData = string | Uint8Array | ArrayBuffer;

export interface WriteEntry {
  path: string;
  data: FileData;
}

export interface SandboxFiles {
  /**
   * Reads a file; text by default, raw bytes with `{ format: "bytes" }` (use bytes for anything
   * binary: bundles, images). Throws `FileNotFoundError` when the file is missing.
   */
  read(path: string, options?: { format?: "text" }): Promise<string>;
  read(path: string, options: { format: "bytes" }): Promise<Uint8Array>;
  /** Creates or overwrites a file, creating missing parent directories. */
  write(path: string, data: FileData): Promise<WriteInfo>;
  write(entries: WriteEntry[]): Promise<WriteInfo[]>;
  /**
   * Lists a directory. `depth` (default 1) also lists entries of subdirectories up to that
   * many levels. Throws `FileNotFoundError` when the directory is missing.
   */
  list(path: string, options?: { depth?: number }): Promise<EntryInfo[]>;
  /** `true` when a file or directory exists at `path`. */
  exists(path: string): Promise<boolean>;
  /** Creates a directory and its parents; `false` when it already existed. */
  makeDir(path: string): Promise<boolean>;
  /** Removes a file or a directory tree; a missing path is not an error. */
  remove(path: string): Promise<void>;
  /**
   * Copies a file of the host (the server's machine) to `path`, creating missing parent
   * directories, without reading it into memory. Only drivers whose sandboxes live on the host's
   * filesystem have it (local); the others are sent bytes with `write`.
   */
  copyFromHost?(path: string, hostPath: string): Promise<WriteInfo>;
  /**
   * Renames a file or directory, replacing a file at `newPath` (like `mv -f` onto a file); the
   * parent of `newPath` must exist. Only drivers with direct filesystem access have it (local):
   * one call instead of starting a command.
   */
  rename?(oldPath: string, newPath: string): Promise<WriteInfo>;
}

/** Outcome of a finished command. */
export interface CommandResult {
  exitCode: number;
  /** Why the command failed beyond its exit code, e.g. `signal: SIGKILL`. */
  error?: string;
  stdout: string;
  stderr: string;
}

/** Receives output one whole line at a time (with its `\n`; the last line may lack it). */
export type OutputListener = (line: string) => void | Promise<void>;

export interface CommandStartOptions {
  /** Working directory. @default SANDBOX_HOME */
  cwd?: string;
  /** Extra environment variables for this command. */
  envs?: Record<string, string>;
  /**
   * Kills the command after this many milliseconds; applies to background commands too
   * (E2B semantics). `0` disables the timeout: long-running dev servers need it.
   * @default 60_000
   */
  timeoutMs?: number;
  /** Returns a {@link CommandHandle} as soon as the command started instead of waiting. */
  background?: boolean;
  onStdout?: OutputListener;
  onStderr?: OutputListener;
}

/** A running command started with `background: true`. */
export interface CommandHandle {
  readonly pid: number;
  /** Output so far (the local driver keeps the last MiB of long-running commands). */
  readonly stdout: string;
  readonly stderr: string;
  /** `undefined` while the command runs. */
  readonly exitCode: number | undefined;
  /**
   * Resolves when the command ends; rejects with `CommandExitError` on a non-zero exit
   * (including being killed) and with `SandboxTimeoutError` when `timeoutMs` passed.
   */
  wait(): Promise<CommandResult>;
  /** Kills the command and its process group; `false` when it had already ended. */
  kill(): Promise<boolean>;
  /** Stops delivering output to the listeners; the command keeps running. */
  disconnect(): Promise<void>;
}

/** A command currently running in the sandbox. */
export interface ProcessInfo {
  pid: number;
  cmd: string;
  args: string[];
  /** The variables passed in `envs` when the command was started. */
  envs: Record<string, string>;
  cwd?: string;
}

export interface SandboxCommands {
  /** Runs a command through `bash -c` and waits; a non-zero exit throws `CommandExitError`. */
  run(cmd: string, options?: CommandStartOptions & { background?: false }): Promise<CommandResult>;
  run(cmd: string, options: CommandStartOptions & { background: true }): Promise<CommandHandle>;
  /** Commands currently running in the sandbox. */
  list(): Promise<ProcessInfo[]>;
  /** Kills a command (SIGKILL) with its process group; `false` when no such command runs. */
  kill(pid: number): Promise<boolean>;
  /**
   * Attaches to a background command started by another connection (another app instance),
   * delivering its output from now on. Only drivers whose commands outlive the process that
   * started them have it (E2B); a local sandbox's commands end with their server.
   */
  connect?(pid: number, options: Pick<CommandStartOptions, "onStdout" | "onStderr">): Promise<CommandHandle>;
}

export interface Sandbox {
  readonly sandboxId: string;
  readonly driver: SandboxDriverName;
  readonly files: SandboxFiles;
  readonly commands: SandboxCommands;
  /** Host (no scheme) at which a port opened inside the sandbox is reachable from outside. */
  getHost(port: number): string;
  /**
   * The port a named service (e.g. `app`) should listen on. Remote sandboxes have their own
   * network and answer `preferred`; the local driver shares the host's ports, so it allocates a
   * free one per sandbox and name, and keeps answering the same one.
   */
  reservePort(name: string, preferred: number): Promise<number>;
  /**
   * Restarts the sandbox's processes, never its files: every process ends, and a git lock a
   * killed git command left behind is removed; every file stays, committed or not (the AI's
   * uncommitted work, `.env.local`). Nothing is started again: callers start the dev servers.
   */
  restart(): Promise<void>;
}

export interface CreateSandboxOptions {
  /** Name of a directory under `templates/` copied to {@link APP_DIR} as the first git commit. */
  template?: string;
}

/** Creates, finds and destroys sandboxes of one driver. */
export interface SandboxProvider {
  readonly driver: SandboxDriverName;
  create(options?: CreateSandboxOptions): Promise<Sandbox>;
  /** Reattaches to an existing sandbox; throws `SandboxNotFoundError` when it is gone. */
  connect(sandboxId: string): Promise<Sandbox>;
  /** Ends every process and deletes the sandbox; `false` when it did not exist. */
  kill(sandboxId: string): Promise<boolean>;
}
