// envd's process service (process.Process): commands run as children of this agent, in the
// sandbox's namespaces, and outlive the connection that started them (a second connection
// attaches with Connect). Behaviour follows envd: the call's deadline kills the command, a
// client that goes away does not.
import { spawn } from "node:child_process";
import { ConnectError, timeoutMsOf } from "./connect.mjs";

/**
 * After the command itself exited, how long to keep reading output that descendants still hold
 * open (`cmd &`): the end must not wait for a daemon the command left behind.
 */
const OUTPUT_GRACE_MS = 100;

const SIGNALS = { SIGNAL_SIGKILL: "SIGKILL", SIGNAL_SIGTERM: "SIGTERM", 9: "SIGKILL", 15: "SIGTERM" };

/** A command of this sandbox, with the streams currently subscribed to its events. */
class Command {
  constructor(config, tag, child) {
    this.config = config;
    this.tag = tag;
    this.child = child;
    this.pid = child.pid;
    /** @type {Set<(event: object) => void>} */
    this.subscribers = new Set();
    /** @type {object | undefined} */
    this.endEvent = undefined;
  }

  publish(event) {
    for (const subscriber of this.subscribers) subscriber(event);
  }

  /** Kills the command's whole process group (it was started as a group leader). */
  killGroup(signal = "SIGKILL") {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // Already gone.
    }
  }
}

const toEndEvent = (code, signal) =>
  signal
    ? { exitCode: -1, exited: false, status: `signal: ${signal === "SIGKILL" ? "killed" : signal}`, error: `signal: ${signal === "SIGKILL" ? "killed" : signal}` }
    : { exitCode: code, exited: true, status: `exit status ${code}`, ...(code !== 0 ? { error: `exit status ${code}` } : {}) };

/**
 * The process service. `baseEnv` is the sandbox's environment (what E2B's create passes as
 * envVars), `home` its home directory (the default working directory).
 */
export function createProcessService({ baseEnv, home }) {
  /** @type {Map<number, Command>} */
  const commands = new Map();

  const find = (selector) => {
    const command =
      selector?.pid !== undefined
        ? commands.get(Number(selector.pid))
        : [...commands.values()].find((candidate) => selector?.tag !== undefined && candidate.tag === selector.tag);
    if (!command) throw new ConnectError("not_found", `process ${selector?.pid ?? selector?.tag} not found`);
    return command;
  };

  const start = (request) => {
    const config = request.process ?? {};
    if (!config.cmd) throw new ConnectError("invalid_argument", "process.cmd is required");
    const child = spawn(config.cmd, config.args ?? [], {
      cwd: config.cwd || home,
      env: { ...baseEnv, ...(config.envs ?? {}) },
      detached: true,
      stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) throw new ConnectError("invalid_argument", `cannot start ${config.cmd}`);
    const command = new Command({ cmd: config.cmd, args: config.args ?? [], envs: config.envs ?? {}, ...(config.cwd ? { cwd: config.cwd } : {}) }, request.tag, child);
    commands.set(command.pid, command);
    child.on("error", () => undefined);
    child.stdin?.on("error", () => undefined);
    for (const name of ["stdout", "stderr"]) {
      child[name].on("data", (chunk) => command.publish({ data: { [name]: chunk.toString("base64") } }));
    }
    child.on("exit", (code, signal) => {
      const finish = () => {
        if (command.endEvent) return;
        child.stdout.destroy();
        child.stderr.destroy();
        commands.delete(command.pid);
        command.endEvent = { end: toEndEvent(code, signal) };
        command.publish(command.endEvent);
        command.subscribers.clear();
      };
      const timer = setTimeout(finish, OUTPUT_GRACE_MS);
      let open = 2;
      const closed = () => {
        if (--open === 0) {
          clearTimeout(timer);
          finish();
        }
      };
      for (const stream of [child.stdout, child.stderr]) {
        if (stream.closed) closed();
        else stream.once("close", closed);
      }
    });
    return command;
  };

  /** Streams a command's events to `stream` until it ends, the client leaves or the deadline passes. */
  const follow = async (command, stream, req, { killOnDeadline }) => {
    stream.send({ event: { start: { pid: command.pid } } });
    const keepaliveSeconds = Number(req.headers["keepalive-ping-interval"] ?? 0);
    const keepalive =
      keepaliveSeconds > 0 ? setInterval(() => stream.send({ event: { keepalive: {} } }), keepaliveSeconds * 1000) : undefined;
    const timeoutMs = timeoutMsOf(req);
    let resolveDone;
    const done = new Promise((resolve) => (resolveDone = resolve));
    const deadline =
      timeoutMs > 0
        ? setTimeout(() => {
            if (killOnDeadline) command.killGroup();
            resolveDone(new ConnectError("deadline_exceeded", `the command did not end within ${timeoutMs} ms`));
          }, timeoutMs)
        : undefined;
    const subscriber = (event) => {
      stream.send({ event });
      if (event.end) resolveDone(undefined);
    };
    command.subscribers.add(subscriber);
    if (command.endEvent) subscriber(command.endEvent);
    const error = await Promise.race([done, stream.closed]);
    command.subscribers.delete(subscriber);
    clearInterval(keepalive);
    clearTimeout(deadline);
    stream.end(error);
  };

  return {
    commands,
    methods: {
      "/process.Process/Start": {
        kind: "server",
        handler: async (request, stream, req) => follow(start(request), stream, req, { killOnDeadline: true }),
      },
      "/process.Process/Connect": {
        kind: "server",
        handler: async (request, stream, req) => follow(find(request.process), stream, req, { killOnDeadline: false }),
      },
      "/process.Process/List": {
        kind: "unary",
        handler: async () => ({
          processes: [...commands.values()].map((command) => ({ config: command.config, pid: command.pid, ...(command.tag ? { tag: command.tag } : {}) })),
        }),
      },
      "/process.Process/SendSignal": {
        kind: "unary",
        handler: async (request) => {
          const command = find(request.process);
          const signal = SIGNALS[request.signal];
          if (!signal) throw new ConnectError("invalid_argument", `unsupported signal ${request.signal}`);
          try {
            process.kill(command.pid, signal);
          } catch {
            throw new ConnectError("not_found", `process ${command.pid} not found`);
          }
          return {};
        },
      },
      "/process.Process/SendInput": {
        kind: "unary",
        handler: async (request) => {
          writeInput(find(request.process), request.input);
          return {};
        },
      },
      "/process.Process/StreamInput": {
        kind: "client",
        handler: async (messages) => {
          let command;
          for await (const message of messages) {
            if (message.start) command = find(message.start.process);
            else if (message.data) {
              if (!command) throw new ConnectError("failed_precondition", "StreamInput needs a start message first");
              writeInput(command, message.data.input);
            }
          }
          return {};
        },
      },
      "/process.Process/CloseStdin": {
        kind: "unary",
        handler: async (request) => {
          const command = find(request.process);
          if (!command.child.stdin) throw new ConnectError("failed_precondition", "the process was started without stdin");
          command.child.stdin.end();
          return {};
        },
      },
      "/process.Process/Update": {
        kind: "unary",
        handler: async (request) => {
          find(request.process);
          if (request.pty) throw new ConnectError("unimplemented", "PTY is not supported by the local sandbox service");
          return {};
        },
      },
    },
  };
}

function writeInput(command, input) {
  if (input?.pty !== undefined) throw new ConnectError("unimplemented", "PTY is not supported by the local sandbox service");
  if (!command.child.stdin) throw new ConnectError("failed_precondition", "the process was started without stdin");
  command.child.stdin.write(Buffer.from(input?.stdin ?? "", "base64"));
}
