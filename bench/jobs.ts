/**
 * The job queue (pg-boss) on the embedded PGlite and on PostgreSQL (127.0.0.1:5432, a throwaway
 * database; skipped when unreachable): throughput of cheap jobs, and the queue latency (enqueued →
 * started) of 20 concurrent builds on two instances, each build a 500 ms stand-in.
 * Run: npx tsx bench/jobs.ts [cheapJobs]
 */
import crypto from "node:crypto";
import pg from "pg";

process.env.LOG_LEVEL = "silent";

const { default: pgBoss } = await import("@/lib/jobs/drivers/pg-boss");
const { openStore } = await import("@/lib/store");
const { openPglite } = await import("@/lib/store/drivers/pglite");
type JobQueueOptions = import("@/lib/jobs/port").JobQueueOptions;
type Sql = import("@/lib/store").Sql;

const cheapJobs = Number(process.argv[2] ?? 500);
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const BUILD_MS = 500;

const BASE: Omit<JobQueueOptions, "handlers"> = {
  concurrency: 4,
  globalConcurrency: 100,
  sandboxConcurrency: 1,
  expireSeconds: 60,
  retryLimit: 2,
  retryDelaySeconds: 5,
  pollMs: 1_000,
};

function summarize(name: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(`  ${name.padEnd(34)} n=${samples.length}  p50 ${at(0.5).toFixed(0)} ms  p95 ${at(0.95).toFixed(0)} ms  p99 ${at(0.99).toFixed(0)} ms  max ${sorted.at(-1)!.toFixed(0)} ms`);
}

/** Resolves once every id in `ids` reached `done` (the handlers report it). */
function tracker() {
  const finished = new Map<string, () => void>();
  const done = new Set<string>();
  return {
    finish(id: string) {
      done.add(id);
      finished.get(id)?.();
    },
    wait: (ids: string[]) => Promise.all(ids.map((id) => (done.has(id) ? undefined : new Promise<void>((resolve) => finished.set(id, resolve))))),
  };
}

async function bench(label: string, sql: Sql, connectionString?: string): Promise<void> {
  console.log(`${label}`);
  const open = (options: JobQueueOptions) => pgBoss({ ...options, sql, connectionString });

  // Throughput: cheap jobs on one instance, enqueued all at once.
  const cheap = tracker();
  const one = await open({ ...BASE, handlers: { cheap: async (job) => cheap.finish(job.id) } });
  let started = performance.now();
  const ids = await Promise.all(Array.from({ length: cheapJobs }, () => one.enqueue("cheap")));
  const enqueuedMs = performance.now() - started;
  await cheap.wait(ids);
  const totalMs = performance.now() - started;
  console.log(`  throughput (1 instance, concurrency ${BASE.concurrency})  ${cheapJobs} jobs: enqueue ${(cheapJobs / (enqueuedMs / 1000)).toFixed(0)}/s, run to completion ${(cheapJobs / (totalMs / 1000)).toFixed(0)} jobs/s`);
  await one.stop();

  // 20 concurrent builds on two instances (2 each), 20 sandboxes, then 4 sandboxes (5 builds each).
  for (const sandboxes of [20, 4]) {
    const startedAt = new Map<string, number>();
    const builds = tracker();
    const build = async (job: { id: string }) => {
      startedAt.set(job.id, performance.now());
      await new Promise((resolve) => setTimeout(resolve, BUILD_MS));
      builds.finish(job.id);
    };
    const kind = `build-${sandboxes}`;
    const instances = [await open({ ...BASE, concurrency: 2, handlers: { [kind]: build } }), await open({ ...BASE, concurrency: 2, handlers: { [kind]: build } })];
    const enqueuedAt = new Map<string, number>();
    started = performance.now();
    const buildIds = await Promise.all(
      Array.from({ length: 20 }, async (_, n) => {
        const at = performance.now();
        const id = await instances[n % 2].enqueue(kind, { sandboxKey: `sandbox-${n % sandboxes}` });
        enqueuedAt.set(id, at);
        return id;
      }),
    );
    await builds.wait(buildIds);
    const makespan = performance.now() - started;
    summarize(`queue latency, 20 builds/${sandboxes} sandboxes`, buildIds.map((id) => startedAt.get(id)! - enqueuedAt.get(id)!));
    console.log(`  ${"".padEnd(34)} all done in ${makespan.toFixed(0)} ms (ideal ${(Math.ceil(20 / Math.min(4, sandboxes)) * BUILD_MS).toFixed(0)} ms)`);
    await Promise.all(instances.map((instance) => instance.stop()));
  }
}

const embedded = await openPglite(undefined);
await bench("pg-boss on PGlite (embedded default)", embedded);
await embedded.close();

const admin = new pg.Client({ connectionString: POSTGRES_URL });
const reachable = await admin.connect().then(() => true, () => false);
if (reachable) {
  const name = `bench_jobs_${crypto.randomBytes(4).toString("hex")}`;
  await admin.query(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const sql = await openStore({ databaseUrl: url.toString(), dataDir: "unused" });
  try {
    await bench("pg-boss on PostgreSQL (DATABASE_URL)", sql, url.toString());
  } finally {
    await sql.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
} else {
  console.log(`PostgreSQL at ${POSTGRES_URL} unreachable: skipped.`);
}
