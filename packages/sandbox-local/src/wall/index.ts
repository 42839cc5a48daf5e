/**
 * The wall around a local sandbox: bubblewrap namespaces (mount, PID, IPC, UTS, user, network),
 * cgroup v1 limits (memory, processes, CPU weight, freezer), and an egress proxy outside the
 * sandbox's network namespace that only reaches public addresses. See the README's "sandbox wall".
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { SandboxCgroups, sandboxesParents } from "./cgroups";
import { listenEgressProxy, listenForward, listenLoopbackRange, type SocketListener } from "./egress";
import { buildMounts, SANDBOX_HOME, SANDBOX_RUNTIME_DIR, sandboxUid, WALL_DIR } from "./mounts";

export { sandboxUid } from "./mounts";

export interface WallLimits {
  /** Whole sandbox (all its processes), cgroup memory limit; OOM kills inside the sandbox only. */
  memoryBytes: number;
  /** pids cgroup limit (a fork bomb stops here). */
  maxProcesses: number;
  /** Relative CPU weight (cgroup cpu.shares). @default 512 (the service keeps 1024) */
  cpuShares?: number;
}

export interface LoopbackForward {
  /** 127.0.0.1:<port> INSIDE the sandbox listens... */
  port: number;
  /** ...and each connection is carried OUTSIDE to this address (e.g. the project's own Convex deployment). */
  target: { host: string; port: number };
}

export interface WallSpec {
  /** Sandbox id; names the cgroups. */
  id: string;
  /**
   * Host directory mounted read-write at /home/user. At start, it and everything in it with a
   * single link become the sandbox user's ({@link sandboxUid}); hard-linked files stay as they are.
   */
  home: string;
  /**
   * Host directory mounted read-write at /tmp, kept across restarts of the sandbox (it becomes the
   * sandbox user's like home). @default a private tmpfs, gone with the sandbox
   */
  tmp?: string;
  /** E.g. the app toolchain. */
  readOnly?: Array<{ host: string; sandbox: string }>;
  /** Host directory mounted read-write at /run/sandbox (the in-sandbox agent's unix socket lives here). */
  runtimeDir: string;
  /** The COMPLETE environment of the first process (nothing of the service's own env leaks). */
  env: Record<string, string>;
  /** @default /home/user */
  cwd?: string;
  /**
   * "registry": outbound HTTP(S) only through an egress proxy outside that refuses loopback, private,
   * link-local and this machine's own addresses; HTTPS_PROXY/HTTP_PROXY/npm_config_* set inside
   * accordingly. "none": loopback only.
   */
  egress: "registry" | "none";
  forwards?: LoopbackForward[];
  /**
   * Ports of the host's loopback the sandbox may reach (e.g. the emulated deployments' range):
   * the wall serves {@link LOOPBACK_RANGE_SOCKET}, where a connection names its port on a first
   * line (`<port>\n`) and is carried to that port of the host's 127.0.0.1 when it lies in the
   * range. Something inside (the sandbox's agent) listens on those ports and uses it.
   */
  loopbackRange?: { first: number; last: number };
  limits: WallLimits;
}

export interface WallExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  limit?: "memory" | "processes";
}

export interface WalledProcess {
  /** Host pid of the wall's outermost process. */
  readonly pid: number;
  /** uid and gid of the sandbox's processes, inside and on the host ({@link sandboxUid}). */
  readonly uid: number;
  /** Of the first process. */
  readonly stdout: NodeJS.ReadableStream;
  readonly stderr: NodeJS.ReadableStream;
  /** Resolves when the sandbox's first process (and so the sandbox) ended, after its cgroups are gone. */
  readonly exited: Promise<WallExit>;
  /** Pauses every process of the sandbox (freezer cgroup). */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  /** Ends every process of the sandbox and removes its cgroups; idempotent. */
  kill(): Promise<void>;
  /** Current memory use of the whole sandbox. */
  memoryBytes(): Promise<number>;
}

/** The socket of {@link WallSpec.loopbackRange}, as the sandbox sees it. */
export const LOOPBACK_RANGE_SOCKET = `${SANDBOX_RUNTIME_DIR}/${WALL_DIR}/loopback.sock`;

/** Where the egress proxy's inside end listens, in the sandbox's own network namespace. */
export const EGRESS_PROXY_PORT = 3128;
const DEFAULT_CPU_SHARES = 512;
/** How often the sandbox's limit counters are read: a sandbox that reached a limit is stopped. */
const LIMIT_POLL_MS = 250;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const BWRAP = "/usr/bin/bwrap";
const SETPRIV = "/usr/bin/setpriv";
const SOCAT = "/usr/bin/socat";

const run = promisify(execFile);

/**
 * Runs as root outside: enters the sandbox's cgroups (files given as $2…), so that nothing the
 * sandbox runs is ever outside them, then execs bwrap.
 */
const LAUNCHER = `n=$1; shift
while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done
exec "$@"`;

/** Where the sandbox's environment script is, inside (a read-only file on the sandbox's own tmpfs root). */
const ENV_SCRIPT = "/run/sandbox-env.sh";
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The environment as a script for dash to source: every value single-quoted, so nothing in it is interpreted. */
function envScript(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'\n`)
    .join("");
}

/**
 * The sandbox's init, run as the sandbox user: takes on the spec's environment (never seen by a
 * root process: LD_PRELOAD and the like would run code as root), starts the loopback listeners,
 * and execs the first process once they are up (a LISTEN row in /proc/net/tcp).
 */
function initScript(ports: Array<{ port: number; socket: string }>, keepPwd: boolean): string {
  const lines = [`. ${ENV_SCRIPT}`];
  for (const { port, socket } of ports) {
    lines.push(`(${SOCAT} -lf /dev/null TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${SANDBOX_RUNTIME_DIR}/${WALL_DIR}/${socket} &)`);
  }
  for (const { port } of ports) {
    const row = `:${port.toString(16).toUpperCase().padStart(4, "0")} 00000000:0000 0A`;
    lines.push(`i=0; while [ $i -lt 1000 ] && ! /usr/bin/grep -q '${row}' /proc/net/tcp; do /usr/bin/sleep 0.01; i=$((i+1)); done`);
  }
  // dash exports PWD: the environment is the spec's alone.
  lines.push(keepPwd ? 'exec "$@"' : 'exec /usr/bin/env -u PWD -- "$@"');
  return lines.join("\n");
}

function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  return {
    HTTPS_PROXY: url,
    HTTP_PROXY: url,
    https_proxy: url,
    http_proxy: url,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
    NO_PROXY: "localhost,127.0.0.1",
    no_proxy: "localhost,127.0.0.1",
  };
}

function validate(spec: WallSpec): void {
  if (!ID_PATTERN.test(spec.id)) throw new Error(`sandbox wall: invalid id ${JSON.stringify(spec.id)}`);
  for (const [name, value] of Object.entries(spec.env)) {
    if (!ENV_NAME.test(name) || value.includes("\0")) throw new Error(`sandbox wall: invalid environment variable ${JSON.stringify(name)}`);
  }
  const range = spec.loopbackRange;
  if (range && !(Number.isInteger(range.first) && Number.isInteger(range.last) && range.first >= 1 && range.first <= range.last && range.last <= 65535)) {
    throw new Error(`sandbox wall: invalid loopback range ${JSON.stringify(range)}`);
  }
  for (const dir of [spec.home, ...(spec.tmp ? [spec.tmp] : []), spec.runtimeDir, ...(spec.readOnly ?? []).flatMap((m) => [m.host, m.sandbox])]) {
    if (!path.isAbsolute(dir)) throw new Error(`sandbox wall: path must be absolute: ${dir}`);
  }
  if (!(spec.limits.memoryBytes > 0) || !(spec.limits.maxProcesses > 0)) throw new Error("sandbox wall: limits must be positive");
  for (const forward of spec.forwards ?? []) {
    if (!Number.isInteger(forward.port) || forward.port < 1 || forward.port > 65535 || forward.port === EGRESS_PROXY_PORT) {
      throw new Error(`sandbox wall: invalid forward port ${forward.port}`);
    }
  }
}

function exitOf(code: number | null, signal: NodeJS.Signals | null): Pick<WallExit, "code" | "signal"> {
  // bwrap exits 128+N when the first process was killed by signal N.
  if (code !== null && code > 128 && code <= 128 + 64) {
    const name = Object.entries(os.constants.signals).find(([, number]) => number === code - 128)?.[0];
    if (name) return { code: null, signal: name as NodeJS.Signals };
  }
  return { code, signal };
}

/** Starts argv as the first process inside a new wall. */
export async function startWalled(argv: string[], spec: WallSpec): Promise<WalledProcess> {
  validate(spec);
  if (argv.length === 0) throw new Error("sandbox wall: empty argv");
  const cgroups = await SandboxCgroups.create(spec.id, {
    memoryBytes: spec.limits.memoryBytes,
    maxProcesses: spec.limits.maxProcesses,
    cpuShares: spec.limits.cpuShares ?? DEFAULT_CPU_SHARES,
  });
  const listeners: SocketListener[] = [];
  const closeListeners = () => Promise.all(listeners.splice(0).map((listener) => listener.close()));
  try {
    const wallDir = path.join(spec.runtimeDir, WALL_DIR);
    await fs.rm(wallDir, { recursive: true, force: true });
    await fs.mkdir(wallDir, { mode: 0o755 });
    await fs.chown(wallDir, 0, 0);
    const uid = sandboxUid(spec.id);
    await fs.chown(spec.runtimeDir, uid, uid);
    // Home becomes the sandbox user's, except files with several links: those share their inode
    // with another tree (a hard-linked toolchain), which must stay read-only to the sandbox.
    const owner = String(uid);
    for (const dir of spec.tmp ? [spec.home, spec.tmp] : [spec.home]) {
      await run("find", [dir, "(", "-type", "d", "-o", "-links", "1", ")", "!", "-user", owner, "-exec", "chown", "-h", `${owner}:${owner}`, "{}", "+"]);
    }
    // A /tmp of the usual shape (sticky, everyone's) for tools that check it.
    if (spec.tmp) await fs.chmod(spec.tmp, 0o1777);
    // The wall's own folder stays root's when it sits inside home.
    await fs.chown(wallDir, 0, 0);

    const insideListeners: Array<{ port: number; socket: string }> = [];
    if (spec.egress === "registry") {
      listeners.push(await listenEgressProxy(path.join(wallDir, "egress.sock")));
      insideListeners.push({ port: EGRESS_PROXY_PORT, socket: "egress.sock" });
    }
    if (spec.loopbackRange) listeners.push(await listenLoopbackRange(path.join(wallDir, path.basename(LOOPBACK_RANGE_SOCKET)), spec.loopbackRange));
    for (const forward of spec.forwards ?? []) {
      const socket = `forward-${forward.port}.sock`;
      listeners.push(await listenForward(path.join(wallDir, socket), forward.target));
      insideListeners.push({ port: forward.port, socket });
    }

    const bwrapOptions = [
      ...["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try", "--hostname", "sandbox"],
      ...["--die-with-parent", "--new-session"],
      ...(await buildMounts(
        { uid, home: spec.home, tmp: spec.tmp, runtimeDir: spec.runtimeDir, readOnly: spec.readOnly ?? [], dataFiles: [{ fd: 4, sandbox: ENV_SCRIPT }], cwd: spec.cwd ?? SANDBOX_HOME },
        wallDir,
      )),
    ];
    const command = [
      // bwrap (the sandbox's PID 1) stays root; everything the sandbox runs is the sandbox user, without capabilities or setuid.
      ...[SETPRIV, `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"],
      ...["/bin/sh", "-c", initScript(insideListeners, "PWD" in spec.env), "sandbox-init"],
      ...argv,
    ];
    const env = spec.egress === "registry" ? { ...spec.env, ...proxyEnv() } : spec.env;
    const child: ChildProcess = spawn(
      "/bin/sh",
      ["-c", LAUNCHER, "wall-launch", String(cgroups.procsFiles.length), ...cgroups.procsFiles, BWRAP, "--args", "3", "--", ...command],
      // Root's part runs with an empty environment. bwrap's options (host paths) and the sandbox's
      // environment come through pipes: never through a command line (visible in ps outside, and
      // as PID 1's inside).
      { env: {} as NodeJS.ProcessEnv, cwd: "/", stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"] },
    );
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    for (const [fd, data] of [[3, bwrapOptions.map((arg) => `${arg}\0`).join("")], [4, envScript(env)]] as const) {
      const pipe = child.stdio[fd] as NodeJS.WritableStream;
      pipe.on("error", () => undefined);
      pipe.end(data);
    }

    let limitHit: WallExit["limit"];
    let killing: Promise<void> | undefined;
    const killAll = () => (killing ??= cgroups.killAll());
    const monitor = setInterval(() => {
      void cgroups.limitReached().then((limit) => {
        if (limit && !limitHit) {
          limitHit = limit;
          void killAll().catch(() => undefined);
        }
      });
    }, LIMIT_POLL_MS);
    monitor.unref();

    const exited = new Promise<WallExit>((resolve) => {
      child.once("exit", (code, signal) => {
        clearInterval(monitor);
        void (async () => {
          const limit = limitHit ?? (await cgroups.limitReached().catch(() => undefined));
          // The sandbox ends with its first process: nothing it started outlives it.
          await killAll().catch(() => undefined);
          await cgroups.remove().catch(() => undefined);
          await closeListeners();
          resolve({ ...exitOf(code, signal), ...(limit ? { limit } : {}) });
        })();
      });
    });

    return {
      pid: child.pid!,
      uid,
      stdout: child.stdout!,
      stderr: child.stderr!,
      exited,
      freeze: () => cgroups.freeze(),
      thaw: () => cgroups.thaw(),
      kill: async () => {
        await killAll();
        await exited;
      },
      memoryBytes: () => cgroups.memoryBytes(),
    };
  } catch (error) {
    await closeListeners();
    await cgroups.killAll().catch(() => undefined);
    await cgroups.remove().catch(() => undefined);
    throw error;
  }
}

async function canRun(file: string, args: string[]): Promise<string | undefined> {
  try {
    await run(file, args, { timeout: 30_000 });
    return undefined;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    return failure.code === "ENOENT" ? `${file} is not installed` : (failure.stderr || failure.message).trim();
  }
}

/** Whether this machine can build walls (bwrap present, namespaces allowed, cgroups writable), and why not. */
export async function wallSupport(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (process.getuid?.() !== 0) return { ok: false, reason: "the sandbox wall needs root (cgroups and the sandbox user)" };
  for (const tool of [BWRAP, SETPRIV, SOCAT]) {
    if (!(await fs.access(tool).then(() => true, () => false))) return { ok: false, reason: `${tool} is not installed (Debian: bubblewrap, util-linux, socat)` };
  }
  try {
    await sandboxesParents();
  } catch (error) {
    return { ok: false, reason: `cgroups v1 not writable: ${(error as Error).message}` };
  }
  const refused = await canRun(BWRAP, [
    ...["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc", "--"],
    ...[SETPRIV, `--reuid=${sandboxUid("wall-support")}`, `--regid=${sandboxUid("wall-support")}`, "--clear-groups", "--no-new-privs", "--", "/usr/bin/true"],
  ]);
  return refused ? { ok: false, reason: `namespaces refused: ${refused}` } : { ok: true };
}
