/**
 * Realtime fan-out across instances: two driver instances (separate connections, as two servers
 * would have) with 100 subscribers split between them. Publishes alternate between the two.
 * Prints, per driver (postgres LISTEN/NOTIFY, redis pub/sub):
 * - burst: events per second from the first publish to the last delivery to all 100 subscribers,
 *   with at most 16 publishes in flight, and the p50/p99 delivery latency in the burst;
 * - one at a time: p50/p99 latency from publish to delivery when each event is the only one.
 * Run: npx tsx bench/realtime-fanout.ts [events=2000]
 * Uses a throwaway database on BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres)
 * and a channel of its own on BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
import crypto from "node:crypto";
import pg from "pg";

process.env.LOG_LEVEL = "silent";
const { default: postgresDriver } = await import("@/lib/realtime/drivers/postgres");
const { default: redisDriver } = await import("@/lib/realtime/drivers/redis");
const { openStore } = await import("@/lib/store");
type FanOutRealtime = import("@/lib/realtime/fan-out").FanOutRealtime;

const EVENTS = Number(process.argv[2] ?? 2000);
const SUBSCRIBERS = 100;
const IN_FLIGHT = 16;
const SEQUENTIAL_EVENTS = 200;
const CHANNEL = "bench-project-errors";
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A typical error notification, about 400 bytes of JSON. */
const payloadOf = (index: number, sentAt: number) => ({
  id: String(index),
  sentAt,
  projectId: crypto.randomUUID(),
  type: "backend-error",
  source: "backend-dev",
  timestamp: new Date().toISOString(),
  message: `✖ Error: Uncaught TypeError: Cannot read properties of undefined (reading 'author')\n    at handler (../convex/messages.ts:${index % 80}:3)`.repeat(2),
});

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

async function measure(name: string, instances: FanOutRealtime[]): Promise<void> {
  let expected = 0;
  let delivered = 0;
  let latencies: number[] = [];
  let onAllDelivered: () => void = () => {};
  for (let index = 0; index < SUBSCRIBERS; index += 1) {
    instances[index % instances.length].subscribe(CHANNEL, (message) => {
      latencies.push(performance.now() - (message.payload as { sentAt: number }).sentAt);
      delivered += 1;
      if (delivered === expected) onAllDelivered();
    });
  }
  await Promise.all(instances.map((instance) => instance.ready()));

  async function run(count: number, inFlight: number): Promise<number> {
    expected = count * SUBSCRIBERS;
    delivered = 0;
    latencies = [];
    const allDelivered = new Promise<void>((resolve) => (onAllDelivered = resolve));
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < count) {
          const index = next++;
          await instances[index % instances.length].publish(CHANNEL, "error-notification", payloadOf(index, performance.now()));
        }
      }),
    );
    await allDelivered;
    return performance.now() - started;
  }

  await run(100, IN_FLIGHT);
  const burstMs = await run(EVENTS, IN_FLIGHT);
  const burst = latencies.sort((a, b) => a - b);
  const oneAtATime: number[] = [];
  for (let index = 0; index < SEQUENTIAL_EVENTS; index += 1) {
    await run(1, 1);
    oneAtATime.push(...latencies);
  }
  oneAtATime.sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(
    `${name}: ${EVENTS} events to ${SUBSCRIBERS} subscribers on ${instances.length} instances: ` +
      `${Math.round((EVENTS / burstMs) * 1000)} events/s (${Math.round((EVENTS * SUBSCRIBERS * 1000) / burstMs)} deliveries/s); ` +
      `burst latency p50 ${ms(percentile(burst, 50))}, p99 ${ms(percentile(burst, 99))}; ` +
      `one at a time p50 ${ms(percentile(oneAtATime, 50))}, p99 ${ms(percentile(oneAtATime, 99))}`,
  );
  await Promise.all(instances.map((instance) => instance.close()));
}

const databaseName = `bench_fanout_${crypto.randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: POSTGRES_URL });
await admin.connect();
await admin.query(`create database ${databaseName}`);
const databaseUrl = new URL(POSTGRES_URL);
databaseUrl.pathname = `/${databaseName}`;
try {
  // Each instance has its own store (pool) and listening connection.
  const stores = await Promise.all([0, 1].map(() => openStore({ databaseUrl: databaseUrl.toString(), dataDir: "unused" })));
  await measure(
    "postgres",
    stores.map((store) => postgresDriver({ connectionString: databaseUrl.toString(), db: async () => store })),
  );
  await Promise.all(stores.map((store) => store.close()));
  const redisChannel = `bench-realtime-${crypto.randomUUID()}`;
  await measure("redis", [0, 1].map(() => redisDriver({ url: REDIS_URL, redisChannel })));
} finally {
  await admin.query(`drop database if exists ${databaseName} with (force)`);
  await admin.end();
}
