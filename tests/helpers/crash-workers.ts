import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

/** The server process of the crash tests and the recovery benchmark. */
const WORKER = path.join(process.cwd(), "tests", "helpers", "crash-worker.ts");

let bundled: Promise<string> | undefined;

/**
 * `crash-worker.ts` bundled once per process (packages stay external, so they load from
 * node_modules as usual): Node starts the bundle in about a third of the CPU time `--import tsx`
 * takes to compile and resolve the same modules, and a run starts dozens of workers.
 */
function workerBundle(): Promise<string> {
  bundled ??= (async () => {
    // Inside the repository, so the bundle's package imports resolve from its node_modules.
    const outfile = path.join(process.cwd(), "node_modules", ".cache", "crash-worker", `${process.pid}.mjs`);
    await build({ entryPoints: [WORKER], outfile, bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", logLevel: "warning" });
    process.once("exit", () => fs.rmSync(outfile, { force: true }));
    return outfile;
  })();
  return bundled;
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** What a worker that was not killed printed: its run's outcome and timings. */
export interface WorkerOutcome {
  ok: boolean;
  state?: { kind: string; deploymentUrl: string };
  error?: unknown;
  /** Duration of the enable/connect call. */
  callMs: number;
  /** When the call answered, counted from the process's start. */
  sinceStartMs: number;
}

export interface CrashWorker {
  exited: Promise<WorkerExit>;
  /** SIGKILLs the worker and resolves once it is gone. */
  kill(): Promise<WorkerExit>;
}

/**
 * Starts a worker with this process's environment plus `env`: PROJECT_ID, CRASH_FLOW
 * (enable | connect), CRASH_AT (a RunPoint where it SIGKILLs itself; empty for none), and any
 * configuration (INSTANCE_ID, PROVISIONING_*, DATABASE_URL, PROVISION_HOST...).
 */
export function startCrashWorker(env: Record<string, string>): CrashWorker {
  let stdout = "";
  let stderr = "";
  const started: Promise<ChildProcess> = workerBundle().then((bundle) => {
    const child = spawn(process.execPath, [bundle], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    return child;
  });
  const exited = started.then((child) => new Promise<WorkerExit>((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }))));
  return {
    exited,
    kill: async () => {
      (await started).kill("SIGKILL");
      return exited;
    },
  };
}

/** The outcome line a worker printed; throws with its stderr when it printed none. */
export function outcomeOf(exit: WorkerExit): WorkerOutcome {
  const line = exit.stdout.trim().split("\n").at(-1);
  if (exit.code !== 0 || !line) throw new Error(`The worker ended with ${exit.signal ?? exit.code} and printed no outcome:\n${exit.stderr}`);
  return JSON.parse(line) as WorkerOutcome;
}
