/**
 * Recovery after a crash: a server process (tests/helpers/crash-worker.ts) is SIGKILLed right
 * after its enable journaled the provisioned deployment; a fresh process then retries. Prints how
 * long the retry took, for a restart under the same INSTANCE_ID (new boot id: the run is taken
 * over at once) and for another instance (it waits for the dead one's heartbeat to expire, at
 * most 3 × INSTANCE_HEARTBEAT_MS after its last beat). The lease is the default 5 minutes.
 * Needs the machine's PostgreSQL (a throwaway database; TEST_POSTGRES_URL overrides the server).
 * Run: npx tsx bench/recovery.ts [runs per case]
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-recovery-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";
process.env.SEED_DEMO = "false";

const { createThrowawayDatabase } = await import("../tests/helpers/throwaway-database");
const { outcomeOf, startCrashWorker } = await import("../tests/helpers/crash-workers");
const { startEmulatorServer } = await import("@/lib/emulator/server");
const { getConfig, reloadConfig } = await import("@/lib/config");
const { createProject } = await import("@/lib/projects");
const { getSandboxProvider } = await import("@/lib/sandbox");
const { closeStore, getStore } = await import("@/lib/store");
const { insertUser } = await import("@/lib/store/users");

const runs = Number(process.argv[2] ?? 5);
const database = await createThrowawayDatabase();
process.env.DATABASE_URL = database.url;
const server = await startEmulatorServer({ projectQuota: runs * 4 });
process.env.PROVISION_HOST = server.baseUrl;
reloadConfig();
const db = await getStore();
const user = await insertUser(db, { name: "bench" });
const sandboxes: string[] = [];

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const describe = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 0.5).toFixed(0)} ms  p95 ${percentile(sorted, 0.95).toFixed(0)} ms  max ${sorted.at(-1)!.toFixed(0)} ms`;
};

async function recover(sameInstance: boolean): Promise<void> {
  const samples = { callMs: [] as number[], sinceStartMs: [] as number[], killToAnswerMs: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const project = await createProject(db, user.id, `bench-recovery-${i}`);
    sandboxes.push(project.sandboxId!);
    const instanceId = `bench-${crypto.randomUUID()}`;
    const env = { PROJECT_ID: project.id, CRASH_FLOW: "enable" };
    const killed = await startCrashWorker({ ...env, INSTANCE_ID: instanceId, CRASH_AT: "provisioned" }).exited;
    if (killed.signal !== "SIGKILL") throw new Error(`The first process was not killed:\n${killed.stderr}`);
    const killedAt = performance.now();
    const outcome = outcomeOf(await startCrashWorker({ ...env, INSTANCE_ID: sameInstance ? instanceId : `${instanceId}-other`, CRASH_AT: "" }).exited);
    if (!outcome.ok) throw new Error(`The retry failed: ${JSON.stringify(outcome.error)}`);
    samples.killToAnswerMs.push(performance.now() - killedAt);
    samples.callMs.push(outcome.callMs);
    samples.sinceStartMs.push(outcome.sinceStartMs);
  }
  console.log(`${sameInstance ? "restart, same instance id" : `another instance (heartbeat ${getConfig().INSTANCE_HEARTBEAT_MS} ms)`}: n=${runs}`);
  console.log(`  retry's enable call:                       ${describe(samples.callMs)}`);
  console.log(`  answer after the new process started:      ${describe(samples.sinceStartMs)}`);
  console.log(`  answer after the kill (spawn + imports in): ${describe(samples.killToAnswerMs)}`);
}

try {
  await recover(true);
  await recover(false);
} finally {
  for (const id of sandboxes) await getSandboxProvider().kill(id);
  await server.close();
  await closeStore();
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
