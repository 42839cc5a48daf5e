import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";

/** A local sandbox service (packages/sandbox-local) this test file started, and how to reach it. */
export interface SandboxServiceProcess {
  /** `http://127.0.0.1:<port>`: the SDK's `apiUrl` and `sandboxUrl` alike. */
  url: string;
  port: number;
  /** An API key of E2B's shape, as the SDK checks it. */
  apiKey: string;
  /** Host pid of the service. */
  pid: number;
  /**
   * `true` once no process of this service's sandboxes has `pid` as its pid inside its sandbox
   * (sandboxes have their own PID namespaces, so the pids the SDK reports are theirs).
   */
  isSandboxProcessGone(pid: number): Promise<boolean>;
  stop(): Promise<void>;
}

const SERVICE_MAIN = path.resolve("packages", "sandbox-local", "src", "main.mjs");
/** As `npm start` runs it: under tsx, since the wall module (src/wall/) is TypeScript. */
const SERVICE_NODE_OPTIONS = ["--import", "tsx"];
/** Generous for a loaded 2-core machine. */
const START_TIMEOUT_MS = 60_000;

async function readProc(pid: number): Promise<{ ppid: number; nspids: number[]; zombie: boolean } | null> {
  const [stat, status] = await Promise.all([
    fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => null),
    fs.readFile(`/proc/${pid}/status`, "utf8").catch(() => null),
  ]);
  if (!stat || !status) return null;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const nspids = (/^NSpid:\s+(.*)$/m.exec(status)?.[1] ?? "").split(/\s+/).map(Number);
  return { ppid: Number(fields[1]), nspids, zombie: fields[0] === "Z" || fields[0] === "X" };
}

async function sandboxProcessAlive(servicePid: number, sandboxPid: number): Promise<boolean> {
  const table = new Map<number, NonNullable<Awaited<ReturnType<typeof readProc>>>>();
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const info = await readProc(Number(name));
    if (info) table.set(Number(name), info);
  }
  const descendsFromService = (pid: number): boolean => {
    for (let current = table.get(pid)?.ppid; current; current = table.get(current)?.ppid) {
      if (current === servicePid) return true;
    }
    return false;
  };
  for (const [pid, info] of table) {
    if (info.zombie || info.nspids.length < 2 || info.nspids.at(-1) !== sandboxPid) continue;
    if (descendsFromService(pid)) return true;
  }
  return false;
}

export interface SandboxServiceOptions {
  /** A restart on the same address. @default a free loopback port */
  port?: number;
  /** @default a fresh key (a restart passes the first one's) */
  apiKey?: string;
  /** `SANDBOX_SERVICE_TOOLCHAIN_DIR`: prepared app toolchains become templates. */
  toolchainDir?: string;
  /** `SANDBOX_LOOPBACK_PORTS` (`first-last`): the host ports sandboxes reach at their own loopback. */
  loopbackPorts?: string;
}

/**
 * Starts the service with its data (and its key file, as `npm start` writes it) under `dataDir`,
 * accepting `apiKey`.
 */
export async function startSandboxService(dataDir: string, options: SandboxServiceOptions = {}): Promise<SandboxServiceProcess> {
  const apiKey = options.apiKey ?? `e2b_${randomBytes(20).toString("hex")}`;
  const keyFile = path.join(dataDir, "service.key");
  await fs.mkdir(dataDir, { recursive: true });
  await fs.writeFile(keyFile, apiKey, { mode: 0o600 });
  const child = spawn(process.execPath, [...SERVICE_NODE_OPTIONS, SERVICE_MAIN], {
    // Only what the service needs: nothing of the test's own environment reaches its sandboxes.
    env: {
      NODE_ENV: "test",
      PATH: process.env.PATH,
      SANDBOX_SERVICE_API_KEY_FILE: keyFile,
      SANDBOX_SERVICE_DATA_DIR: dataDir,
      SANDBOX_SERVICE_PORT: String(options.port ?? 0),
      ...(options.toolchainDir ? { SANDBOX_SERVICE_TOOLCHAIN_DIR: options.toolchainDir } : {}),
      ...(options.loopbackPorts ? { SANDBOX_LOOPBACK_PORTS: options.loopbackPorts } : {}),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the sandbox service did not start")), START_TIMEOUT_MS);
    createInterface({ input: child.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { listening: number }).listening);
    });
    void exited.then(() => reject(new Error("the sandbox service ended before it listened")));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    apiKey,
    pid: child.pid!,
    isSandboxProcessGone: async (pid) => !(await sandboxProcessAlive(child.pid!, pid)),
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
