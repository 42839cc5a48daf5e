/**
 * Latency of the backend client against the local emulator over loopback HTTP (embedded PGlite):
 * full managed provisioning, env-var writes and reads, and initializeBackendAuth.
 * Run: npx tsx bench/backend-emulator.ts [iterations]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// A throwaway data directory, set before the config is first read.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-backend-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";

const { initializeBackendAuth, provisionManagedProject, queryEnvVariable, setEnvVariables } = await import("@/lib/backend");
const { startEmulatorServer } = await import("@/lib/emulator/server");
const { closeStore } = await import("@/lib/store");

const iterations = Number(process.argv[2] ?? 50);

function summarize(name: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  console.log(`${name.padEnd(28)} n=${samples.length}  mean ${mean.toFixed(1)} ms  p50 ${at(0.5).toFixed(1)} ms  p95 ${at(0.95).toFixed(1)} ms  max ${sorted.at(-1)!.toFixed(1)} ms`);
}

async function time<T>(samples: number[], run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await run();
  samples.push(performance.now() - started);
  return result;
}

const server = await startEmulatorServer({ projectQuota: iterations * 2 + 10 });
const { identity } = server.emulator;
const options = { provisionHost: server.baseUrl };
const team = { teamScopedToken: identity.teamToken, teamSlug: identity.teamSlug };
try {
  // Warm-up: opens and migrates the store.
  await provisionManagedProject({ ...team, projectName: "warm-up" }, options);
  const provision: number[] = [];
  const setVars: number[] = [];
  const queryVar: number[] = [];
  const auth: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const project = await time(provision, () => provisionManagedProject({ ...team, projectName: `bench ${index}` }, options));
    await time(setVars, () => setEnvVariables(project, { SITE_URL: "http://localhost:8081", OTHER: String(index) }));
    await time(queryVar, () => queryEnvVariable(project, "OTHER"));
    await time(auth, () => initializeBackendAuth(project, "http://localhost:8081"));
  }
  summarize("provisionManagedProject", provision);
  summarize("setEnvVariables (2 vars)", setVars);
  summarize("queryEnvVariable", queryVar);
  summarize("initializeBackendAuth", auth);

  const parallel = 10;
  const started = performance.now();
  await Promise.all(Array.from({ length: parallel }, (_, index) => provisionManagedProject({ ...team, projectName: `parallel ${index}` }, options)));
  console.log(`${parallel} parallel provisionings: ${(performance.now() - started).toFixed(1)} ms wall`);
} finally {
  await server.close();
  await closeStore();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
