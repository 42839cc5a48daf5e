import { spawn } from "node:child_process";
import path from "node:path";

/** The server process of the crash tests and the recovery benchmark: `crash-worker.ts` under `node --import tsx`. */
const WORKER = path.join(process.cwd(), "tests", "helpers", "crash-worker.ts");

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
  const child = spawn(process.execPath, ["--import", "tsx", WORKER], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<WorkerExit>((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    exited,
    kill: () => {
      child.kill("SIGKILL");
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
