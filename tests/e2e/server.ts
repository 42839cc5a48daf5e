import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pgliteDirOf } from "@/lib/store";
import { removeTreeSync } from "../helpers/scratch";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** Where browser tests keep their screenshots and the server log (git-ignored). */
export const ARTIFACTS_DIR = path.join(ROOT, "test-artifacts", "e2e");

/** Environment passed through to the server: enough to run node and git, nothing that configures the product. */
/** SANDBOX_DRIVER: the suite's driver (tests/setup.ts), unless a file's `env` says otherwise. */
const PASSED_THROUGH = ["PATH", "HOME", "USER", "LANG", "TMPDIR", "TZ", "SANDBOX_DRIVER"];

/** Each server's output, kept when it stops (servers of several test files may run at once). */
const logFileOf = (port: number) => path.join(ARTIFACTS_DIR, `server-${port}.log`);
function keepLog(port: number, output: string): string {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  fs.writeFileSync(logFileOf(port), output);
  return logFileOf(port);
}

const SIGNIN_LINK = /(https?:\/\/\S+\/signin\/link\?token=\S+)/;

export interface ProductServer {
  baseUrl: string;
  dataDir: string;
  /** The one-time sign-in link the server printed at start. */
  signInLink: string;
  /** Everything the server printed so far. */
  output(): string;
  /** The pid of the process started: `node scripts/start.mjs`, or `npm start` with `viaNpm`. */
  pid: number;
  /** Resolves with the started process's exit code (null when a signal ended it) once it exited. */
  exited: Promise<number | null>;
  /** The exit code of `npm start` once it exited (null when a signal ended it). */
  exitCode(): number | null;
  stop(): Promise<void>;
  /** SIGKILLs the server's process group (a crash); its DATA_DIR is kept for a restart. */
  kill(): Promise<void>;
}

/** A loopback port free at the moment of asking. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM");
  const forced = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
  await exited;
  clearTimeout(forced);
}

/**
 * Starts the product the way `npm start` does (scripts/start.mjs: builds when `.next` is missing
 * or older than the sources, then the custom server `scripts/server.mjs`) on embedded defaults: a fresh DATA_DIR, a free
 * port, no product configuration besides `env`. Resolves once the server printed its sign-in link
 * and answers /api/health. A restart passes the previous server's `dataDir` and `port` (kept on stop).
 * Without `initialisedDatabase` (a test file's `inject("pgliteTemplate")`), a fresh DATA_DIR makes
 * the server initialise its embedded database, as a first start on a new machine does. With
 * `viaNpm` the process is `npm start` itself, as a user or a process manager runs it.
 */
export async function startProductServer(options: {
  env?: Record<string, string>;
  timeoutMs: number;
  dataDir?: string;
  port?: number;
  initialisedDatabase?: string;
  viaNpm?: boolean;
}): Promise<ProductServer> {
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const ownsDataDir = !options.dataDir;
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "cbs-e2e-data-"));
  if (ownsDataDir && options.initialisedDatabase) fs.cpSync(options.initialisedDatabase, pgliteDirOf(dataDir), { recursive: true });
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) if (process.env[name]) env[name] = process.env[name]!;
  Object.assign(env, { PORT: String(port), PUBLIC_BASE_URL: baseUrl, DATA_DIR: dataDir, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" }, options.env);

  // Its own process group, so stopping reaches the server too; sandbox commands die with it.
  const [command, args] = options.viaNpm ? ["npm", ["start"]] : [process.execPath, [path.join(ROOT, "scripts", "start.mjs")]];
  const child = spawn(command, args, {
    cwd: ROOT,
    // Next's types require NODE_ENV in ProcessEnv; it is set above.
    env: env as NodeJS.ProcessEnv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const signInLink = new Promise<string>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = output.match(SIGNIN_LINK);
      if (match) resolve(match[1]);
    };
    child.stdout!.on("data", collect);
    child.stderr!.on("data", collect);
    child.once("exit", (code) =>
      reject(new Error(`The server exited (${code}) before it was ready; whole output in ${keepLog(port, output)}. Its end:\n${output.slice(-4000)}`)),
    );
  });

  const server: ProductServer = {
    baseUrl,
    dataDir,
    signInLink: "",
    pid: child.pid!,
    exited,
    output: () => output,
    exitCode: () => child.exitCode,
    async stop() {
      await stopProcessGroup(child);
      keepLog(port, output);
      if (ownsDataDir) removeTreeSync(dataDir);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    },
  };
  try {
    server.signInLink = await withTimeout(signInLink, options.timeoutMs, () => `No sign-in link within ${options.timeoutMs} ms:\n${output.slice(-4000)}`);
    // The same budget as the link: a server that printed its link may still be loading its first route on a loaded machine (30 s fell short at load 50).
    await withTimeout(waitForHealth(baseUrl, child), options.timeoutMs, () => `The server printed its link but /api/health never answered within ${options.timeoutMs} ms.`);
    return server;
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function waitForHealth(baseUrl: string, child: ChildProcess): Promise<void> {
  while (child.exitCode === null) {
    const healthy = await fetch(`${baseUrl}/api/health`).then((response) => response.ok, () => false);
    if (healthy) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("The server exited.");
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message())), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
