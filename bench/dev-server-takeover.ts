/**
 * Backend dev server takeover between two instances on one PostgreSQL. This process is instance
 * B (it runs the lease check); instance A (tests/helpers/service-instance.ts) starts the
 * project's backend dev server (a local sandbox, the browser tests' stand-in server) and then
 * either is SIGKILLed (B takes the lease once A's heartbeat expired and restarts the server) or
 * gets SIGTERM (A drains and hands the lease back; B takes it at its next check). Prints, per
 * case, the time from the signal until B holds the lease of a running server.
 * Needs the machine's PostgreSQL (a throwaway database; TEST_POSTGRES_URL overrides the server).
 * Run: npx tsx bench/dev-server-takeover.ts [runs per case]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-takeover-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";
process.env.SEED_DEMO = "false";

const { createThrowawayDatabase } = await import("../tests/helpers/throwaway-database");
const { startServiceInstance } = await import("../tests/helpers/service-instances");
const { createTestUser } = await import("../tests/helpers/users");
const { createDevServerControl } = await import("../tests/e2e/dev-server-control");
const { startBackendDevServerLeaseCheck } = await import("@/lib/cloud/backend-dev-server-leases");
const { getConfig, reloadConfig } = await import("@/lib/config");
const { getSandboxProvider } = await import("@/lib/sandbox");
const { resetProcessSingletons } = await import("@/lib/singletons");
const { getStore } = await import("@/lib/store");
const { getDevServerLease } = await import("@/lib/store/dev-server-leases");
const { insertConnectedProject } = await import("../tests/helpers/connected-project");

const runs = Number(process.argv[2] ?? 5);
const database = await createThrowawayDatabase();
const control = createDevServerControl();
Object.assign(process.env, { DATABASE_URL: database.url, INSTANCE_ID: "bench-b", BACKEND_DEV_COMMAND: control.command });
reloadConfig();
const db = await getStore();
const owner = await createTestUser(db, "bench");
const sandbox = await getSandboxProvider().create();
const project = await insertConnectedProject(db, owner.user.id, sandbox.sandboxId, "bench-takeover");
startBackendDevServerLeaseCheck(db);

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const describe = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 0.5)} ms  p95 ${percentile(sorted, 0.95)} ms  max ${sorted.at(-1)} ms`;
};

/** Milliseconds from `since` until B holds the lease of a running server. */
async function untilBHolds(since: number): Promise<number> {
  for (;;) {
    const lease = await getDevServerLease(db, project.id);
    if (lease?.ownerInstanceId === "bench-b" && lease.held) return Date.now() - since;
    if (Date.now() - since > 120_000) throw new Error("B never took the lease");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function takeover(signal: "SIGKILL" | "SIGTERM"): Promise<void> {
  const samples: number[] = [];
  const exits: number[] = [];
  for (let i = 0; i < runs; i++) {
    const a = await startServiceInstance({ INSTANCE_ID: "bench-a" });
    const started = await fetch(`${a.baseUrl}/api/backend/dev/start`, {
      method: "POST",
      headers: { ...owner.headers, "content-type": "application/json" },
      body: JSON.stringify({ projectId: project.id }),
    });
    if (!((await started.json()) as { success: boolean }).success) throw new Error("A could not start the backend dev server");
    const sentAt = Date.now();
    a.child.kill(signal);
    const exitCode = await a.exited.then((code) => (exits.push(Date.now() - sentAt), code));
    if (signal === "SIGTERM" && exitCode !== 0) throw new Error(`A exited ${exitCode} after SIGTERM:\n${a.output()}`);
    samples.push(await untilBHolds(sentAt));
  }
  console.log(`${signal} A -> B holds the lease: ${describe(samples)}   (A gone after: ${describe(exits)})`);
}

const { INSTANCE_HEARTBEAT_MS, BACKEND_DEV_LEASE_CHECK_MS } = getConfig();
console.log(`${runs} runs per case; INSTANCE_HEARTBEAT_MS ${INSTANCE_HEARTBEAT_MS}, BACKEND_DEV_LEASE_CHECK_MS ${BACKEND_DEV_LEASE_CHECK_MS}`);
try {
  await takeover("SIGKILL");
  await takeover("SIGTERM");
} finally {
  await resetProcessSingletons();
  await database.drop();
  control.cleanup();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
