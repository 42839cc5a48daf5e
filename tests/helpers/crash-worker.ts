/**
 * One server process of the crash tests and bench/recovery.ts, run by startCrashWorker (crash-workers.ts):
 * enables (or connects, CRASH_FLOW=connect) the backend of PROJECT_ID against the shared store
 * and the test's emulator, SIGKILLing itself when the run reaches CRASH_AT (a RunPoint). Prints
 * one JSON line: the outcome and how long the call took, and how long after this process started
 * it answered.
 */
import { connectManagedBackend, enableCloudBackend } from "@/lib/cloud/enable";
import type { RunnerOptions, RunPoint } from "@/lib/cloud/provisioning-run";
import { AppError } from "@/lib/errors";
import { getStore } from "@/lib/store";
import { getProject } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import type { WorkerOutcome } from "./crash-workers";

const crashAt = process.env.CRASH_AT as RunPoint | undefined;
const db = await getStore();
const project = await getProject(db, process.env.PROJECT_ID!);
if (!project) throw new Error(`No project ${process.env.PROJECT_ID}.`);

const options: RunnerOptions = {
  onStep: async (point) => {
    if (point === crashAt) process.kill(process.pid, "SIGKILL");
  },
};
const started = performance.now();
const outcome = await (process.env.CRASH_FLOW === "connect"
  ? connectManagedBackend(project, options)
  : enableCloudBackend(project, openProjectSandbox, options)
).then(
  (state) => ({ ok: true, state }),
  (error: unknown) => ({ ok: false, error: error instanceof AppError ? { status: error.status, code: error.code, message: error.message } : String(error) }),
);
const answeredAt = performance.now();
console.log(JSON.stringify({ ...outcome, callMs: answeredAt - started, sinceStartMs: answeredAt } satisfies WorkerOutcome));
// The dev servers this process started end with it (their supervisor's lifeline is our pipe).
process.exit(0);
