import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import { SandboxError } from "../errors";

/**
 * The command host's script. A file of its own run by plain Node, not a module of the bundle:
 * it is found from the working directory, like the templates.
 */
const HOST_SCRIPT = path.join(/*turbopackIgnore: true*/ process.cwd(), "lib", "sandbox", "drivers", "local-command-host-process.mjs");
const SINGLETON_KEY = "sandboxCommandHost";

export interface HostedCommand {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** What the host reports about one command after it started. */
export interface HostedCommandEvents {
  onOutput(stream: "stdout" | "stderr", chunk: Uint8Array): void;
  /** Once, after the process exited and its output was read (or given up on). */
  onClose(code: number | null, signal: string | null): void;
}

type HostMessage =
  | { type: "started"; id: number; pid: number }
  | { type: "failed"; id: number; message: string }
  | { type: "output"; id: number; stream: "stdout" | "stderr"; data: Uint8Array }
  | { type: "close"; id: number; code: number | null; signal: string | null };

interface Pending {
  events: HostedCommandEvents;
  started?: { resolve: (pid: number) => void; reject: (error: Error) => void };
}

/**
 * The server's side of the command host (`local-command-host-process.mjs`): one small Node
 * process, started before the server grows, that spawns the sandbox commands, so the server
 * itself never forks on a request path. If the host dies, its commands die with it (their
 * lifeline is its pipe) and are reported killed; the next command starts a new host.
 */
export class CommandHost {
  private readonly child: ChildProcess;
  private readonly commands = new Map<number, Pending>();
  private nextId = 1;
  private exited = false;

  constructor(script = HOST_SCRIPT) {
    if (!existsSync(/*turbopackIgnore: true*/ script)) throw new SandboxError(`The sandbox command host ${script} is missing; start the service from its directory.`);
    this.child = spawn(process.execPath, [script], { stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" });
    this.child.on("message", (message: HostMessage) => this.receive(message));
    this.child.once("exit", () => this.lost());
    // The host could not be started, or a message could not reach it: it is as good as gone.
    this.child.on("error", () => {
      this.lost();
      this.child.kill("SIGKILL");
    });
    // Idle, the host must not keep this process alive; while commands run it does (see track).
    this.child.unref();
    this.child.channel?.unref();
  }

  /** The host process's pid, the parent of every command. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts a command; resolves with its pid, rejects when the process cannot be created. */
  spawn(command: HostedCommand, events: HostedCommandEvents): Promise<number> {
    if (this.exited) return Promise.reject(new SandboxError("Could not start the command: the sandbox command host has exited."));
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      this.commands.set(id, { events, started: { resolve, reject } });
      this.track();
      this.child.send({ id, ...command });
    });
  }

  /** Ends the host, and with it every command it started. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await exited;
  }

  private receive(message: HostMessage): void {
    const command = this.commands.get(message.id);
    if (!command) return;
    switch (message.type) {
      case "started":
        command.started?.resolve(message.pid);
        command.started = undefined;
        return;
      case "failed":
        this.forget(message.id);
        command.started?.reject(new SandboxError(`Could not start the command: ${message.message}`));
        return;
      case "output":
        command.events.onOutput(message.stream, message.data);
        return;
      case "close":
        this.forget(message.id);
        command.events.onClose(message.code, message.signal);
    }
  }

  /** The host died: its commands died with it. */
  private lost(): void {
    if (this.exited) return;
    this.exited = true;
    void resetProcessSingleton(SINGLETON_KEY, this);
    const commands = [...this.commands.values()];
    this.commands.clear();
    for (const command of commands) {
      if (command.started) command.started.reject(new SandboxError("Could not start the command: the sandbox command host has exited."));
      else command.events.onClose(null, "SIGKILL");
    }
  }

  private forget(id: number): void {
    this.commands.delete(id);
    this.track();
  }

  /** Keeps this process alive exactly while commands run, as their own child processes did. */
  private track(): void {
    if (this.commands.size > 0) this.child.channel?.ref();
    else this.child.channel?.unref();
  }
}

/**
 * The process's command host, started on first use: by the server first thing at start, or else
 * when a local provider is created.
 */
export function getCommandHost(): CommandHost {
  return processSingleton(SINGLETON_KEY, () => new CommandHost(), { close: (host) => host.close() });
}

/**
 * Removes a directory tree with `rm -rf`, started by the command host: a sandbox is tens of
 * thousands of hard links, which Node's recursive `fs.rm` removes with about six times the CPU
 * time (measured: 1.1 s against 0.17 s for the app toolchain's node_modules).
 */
export async function removeTree(hostPath: string): Promise<void> {
  let output = "";
  const closed = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    getCommandHost()
      .spawn(
        { file: "rm", args: ["-rf", "--", hostPath], cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" } },
        {
          onOutput: (_stream, chunk) => (output += Buffer.from(chunk).toString("utf8")),
          onClose: (code, signal) => resolve({ code, signal }),
        },
      )
      .catch(reject);
  });
  const { code, signal } = await closed;
  if (code !== 0) throw new SandboxError(`Could not remove ${hostPath}: rm ${signal ? `was stopped (${signal})` : `exited with ${code}`}${output ? `: ${output.trim().slice(-500)}` : ""}`);
}
