import { spawn, type ChildProcess, type Serializable } from "node:child_process";
import crypto from "node:crypto";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { log } from "@/lib/log";

/**
 * The wall around pushed code: `function-runner.mjs` runs as a child process of its own, never in
 * the server's process and never with its environment, inside Debian's bubblewrap:
 * - its own mount namespace holding only node, the packages the runner loads (read-only), the
 *   push's modules (read-only) and an empty /tmp: no DATA_DIR, sandboxes or service code;
 * - its own PID namespace and /proc, as the host's unprivileged nobody without capabilities: it
 *   sees and signals only its own processes;
 * - its own network namespace with nothing but its own loopback: no network at all (an action's
 *   `fetch` goes through the server, lib/emulator/outbound-fetch.ts);
 * - a memory cgroup covering off-heap memory (the heap keeps its own limit) and a pids cgroup too
 *   small for another node process, so it starts no child processes.
 * What it answers goes over the IPC channel node opens to its children (fd 3).
 */

export const RUNNER_SCRIPT = path.join(/*turbopackIgnore: true*/ process.cwd(), "lib", "emulator", "function-runner.mjs");
/** Heap of a runner; its memory cgroup holds the rest. */
export const RUNNER_HEAP_MB = 256;
/** Memory of one runner, heap and off-heap; the cgroup's OOM killer stops a runner beyond it. */
export const RUNNER_MEMORY_BYTES = 512 * 1024 * 1024;
/**
 * Tasks (threads count in cgroup v1) of one runner: bubblewrap's two and node's 11 (main, 4 V8
 * platform workers, 4 libuv workers, signal handling), with room for 3 more: a second node needs 7.
 */
export const RUNNER_MAX_TASKS = 16;
/** The user the runner runs as: the host's nobody. */
const RUNNER_UID = 65534;
const CGROUP_ROOT = "/sys/fs/cgroup";
/** Where the push's modules are inside the wall: a path that names nothing of the server's (DATA_DIR). */
const MODULES_INSIDE = "/deployment/modules";
const CGROUP_PARENT = "cloud-backend-functions";

/** A program of the server's PATH, by absolute path (the runner's environment has no PATH). */
function programPath(name: string): string {
  const dirs = (process.env.PATH ?? "/usr/bin:/bin").split(path.delimiter);
  const found = dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file));
  if (!found) throw new Error(`The function runtime needs ${name} on the PATH (Debian: apt-get install ${name === "bwrap" ? "bubblewrap" : "util-linux"}).`);
  return found;
}

/** The packages the runner imports, as directories (bound read-only at their own paths, so imports resolve as outside). */
function runnerPackageDirs(): string[] {
  const require = createRequire(RUNNER_SCRIPT);
  return ["convex", "convex-test", "croner"].map((name) => path.dirname(require.resolve(`${name}/package.json`)));
}

/** The system libraries node and setpriv link, read-only. */
function systemLibraryBinds(): string[] {
  const binds: string[] = [];
  for (const dir of ["/usr/lib", "/usr/lib64", "/lib", "/lib64"]) {
    if (!existsSync(dir)) continue;
    // A merged /usr links /lib to usr/lib: the link, not a second bind.
    if (dir.startsWith("/lib") && existsSync(`/usr${dir}`)) binds.push("--symlink", `usr${dir}`, dir);
    else binds.push("--ro-bind", dir, dir);
  }
  return binds;
}

/** Every directory above these paths, parents first, without the root. */
function ancestors(paths: readonly string[]): string[] {
  const found = new Set<string>();
  for (const file of paths) {
    for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) found.add(dir);
  }
  return [...found].sort((a, b) => a.split("/").length - b.split("/").length);
}

/** A cgroup of `controller` for one runner, limits written; its `cgroup.procs` path. */
async function createCgroup(controller: "memory" | "pids", name: string, limits: Record<string, string>): Promise<string> {
  const dir = path.join(CGROUP_ROOT, controller, CGROUP_PARENT, name);
  await fs.mkdir(dir, { recursive: true });
  for (const [file, value] of Object.entries(limits)) {
    if (existsSync(path.join(dir, file))) await fs.writeFile(path.join(dir, file), value);
  }
  return path.join(dir, "cgroup.procs");
}

/** Removes a runner's cgroup once its last task ended (the kernel refuses before). */
async function removeCgroup(procsFile: string): Promise<void> {
  const dir = path.dirname(procsFile);
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await fs.rmdir(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      await delay(250);
    }
  }
  log.warn("a function runner's cgroup was not removed", { dir });
}

export interface RunnerOptions {
  /** The push's modules directory, readable inside at MODULES_INSIDE (the runner gets that path as `dir`). */
  dir: string;
  /** process.env of the pushed code: the deployment's variables and URLs, nothing else. */
  env: Record<string, string>;
  /** The runner's first message: its mode and data (`dir` is added). */
  init: Record<string, Serializable | null>;
}

/** A started runner: its process (IPC messages, exit) and a kill that ends all it started. */
export interface RunnerProcess {
  child: ChildProcess;
  kill(): void;
  /** The last lines the runner wrote to stderr. */
  stderrTail(): string;
}

/**
 * Starts the runner behind the wall. A shell of the server's user puts itself into the runner's
 * cgroups (children inherit them) and becomes bubblewrap, whose child becomes nobody (setpriv)
 * and then node: no task of the runner ever ran outside its limits. The cgroups go when it ended.
 */
export async function startRunnerProcess({ dir, env, init }: RunnerOptions): Promise<RunnerProcess> {
  const name = crypto.randomBytes(8).toString("hex");
  let cgroups: string[];
  try {
    cgroups = [
      await createCgroup("memory", name, {
        "memory.limit_in_bytes": String(RUNNER_MEMORY_BYTES),
        "memory.memsw.limit_in_bytes": String(RUNNER_MEMORY_BYTES),
      }),
      await createCgroup("pids", name, { "pids.max": String(RUNNER_MAX_TASKS) }),
    ];
  } catch (error) {
    throw new Error(`The function runtime needs writable memory and pids cgroups (v1) under ${CGROUP_ROOT}: ${(error as Error).message}`);
  }
  const setpriv = programPath("setpriv");
  const readOnly = [process.execPath, setpriv, ...runnerPackageDirs(), RUNNER_SCRIPT];
  const wall = [
    programPath("bwrap"),
    "--die-with-parent",
    "--new-session",
    // Every namespace but the user's: the runner is the host's nobody, dropped to by setpriv inside.
    "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
    "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
    // Its own /proc, /dev and /tmp first: binds below them (a DATA_DIR in /dev/shm) go on top.
    "--proc", "/proc",
    "--dev", "/dev",
    "--perms", "1777", "--tmpfs", "/tmp",
    // bubblewrap makes missing parents of a bind 0700 (root's): nobody must pass through them.
    ...ancestors([...readOnly, MODULES_INSIDE]).flatMap((ancestor) => ["--perms", "0755", "--dir", ancestor]),
    ...systemLibraryBinds(),
    ...readOnly.flatMap((source) => ["--ro-bind", source, source]),
    "--ro-bind", dir, MODULES_INSIDE,
    "--chdir", MODULES_INSIDE,
    setpriv, `--reuid=${RUNNER_UID}`, `--regid=${RUNNER_UID}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
    process.execPath,
    `--max-old-space-size=${RUNNER_HEAP_MB}`,
    "--enable-source-maps",
    RUNNER_SCRIPT,
  ];
  const joinCgroupsThenRun = 'for procs in "$@"; do [ "$procs" = -- ] && break; echo $$ > "$procs" || exit 1; shift; done; shift; exec "$@"';
  const child: ChildProcess = spawn("/bin/sh", ["-c", joinCgroupsThenRun, "runner", ...cgroups, "--", ...wall], {
    // Only what the pushed code may see (the type asks for the server's own variables).
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    serialization: "advanced",
  });
  // What pushed code prints outside a call is not reported (the backend drops it too); the end of
  // stderr says why a runner that never got ready failed (the wall's own errors).
  child.stdout?.resume();
  let stderrTail = "";
  child.stderr?.setEncoding("utf8").on("data", (text: string) => (stderrTail = (stderrTail + text).slice(-2000)));
  child.once("exit", () => void Promise.all(cgroups.map(removeCgroup)));
  child.once("spawn", () => child.send({ ...init, dir: MODULES_INSIDE }));
  return {
    child,
    // bubblewrap's own child dies with it (--die-with-parent), and with it the PID namespace.
    kill: () => void child.kill("SIGKILL"),
    stderrTail: () => stderrTail.trim(),
  };
}
