/**
 * Enable latency: POST /api/cloud/enable's flow (enableCloudBackend) for 20 fresh projects, with
 * the emulator answering at once and with 1,000 ms injected on every management-API call.
 * Prints p50/p95 and the overhead beyond the injected latency (calls × latency).
 * Run: npx tsx bench/enable.ts [projects]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-enable-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";
process.env.SEED_DEMO = "false";

const { startEmulatorServer } = await import("@/lib/emulator/server");
const { reloadConfig } = await import("@/lib/config");
const { enableCloudBackend } = await import("@/lib/cloud/enable");
const { openProjectSandbox } = await import("@/lib/workspace");
const { createProject } = await import("@/lib/projects");
const { getSandboxProvider } = await import("@/lib/sandbox");
const { closeStore, getStore } = await import("@/lib/store");
const { insertUser } = await import("@/lib/store/users");

const count = Number(process.argv[2] ?? 20);
// Management-API calls one enable makes (v1: token_details, project lookup by slug, create_project, create_deploy_key).
let calls = 0;
const server = await startEmulatorServer({
  projectQuota: count * 4,
  onExchange: (exchange) => {
    if (exchange.api === "management") calls += 1;
  },
});
process.env.PROVISION_HOST = server.baseUrl;
reloadConfig();
const db = await getStore();
const user = await insertUser(db, { name: "bench" });

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function run(latencyMs: number): Promise<void> {
  const projects = [];
  for (let i = 0; i < count; i++) projects.push(await createProject(db, user.id, `bench-${latencyMs}-${i}`));
  const samples: number[] = [];
  calls = 0;
  for (const project of projects) {
    // Every management call of this enable waits `latencyMs`; deployment calls answer at once.
    if (latencyMs > 0) server.emulator.faults.add({ api: "management", latencyMs, times: 1_000 });
    const started = performance.now();
    await enableCloudBackend(project, openProjectSandbox);
    samples.push(performance.now() - started);
    server.emulator.faults.clear();
  }
  const callsPerEnable = calls / count;
  const injected = callsPerEnable * latencyMs;
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 0.5);
  const p95 = percentile(sorted, 0.95);
  console.log(
    `latency ${String(latencyMs).padStart(4)} ms: n=${count} p50 ${p50.toFixed(0)} ms  p95 ${p95.toFixed(0)} ms  ` +
      `(${callsPerEnable} API calls → ${injected} ms injected; overhead p50 ${(p50 - injected).toFixed(0)} ms, p95 ${(p95 - injected).toFixed(0)} ms)`,
  );
  for (const project of projects) await getSandboxProvider().kill(project.sandboxId!);
}

try {
  await run(0);
  await run(1000);
} finally {
  await server.close();
  await closeStore();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
