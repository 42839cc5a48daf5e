/**
 * Replay of 200 stored error notifications to a new SSE subscriber: the time from the request to
 * the 200th event, through the real route handler (auth, store query, stream), p50 and p90.
 * Run: npx tsx bench/error-replay.ts [rounds=50]
 * Always a throwaway DATA_DIR with PGlite: never the configured database.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

process.env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "bench-error-replay-"));
process.env.LOG_LEVEL = "silent";
process.env.REALTIME_DRIVER = "memory";
delete process.env.DATABASE_URL;
const { GET } = await import("@/app/api/projects/[id]/errors/stream/route");
const { generateApiToken, hashApiToken } = await import("@/lib/auth");
const { createProject } = await import("@/lib/projects");
const { buildErrorNotification } = await import("@/lib/realtime");
const { ERROR_HISTORY_SIZE, sendErrorNotification } = await import("@/lib/realtime/error-notifications");
const { closeStore, getStore } = await import("@/lib/store");
const { insertApiToken, insertUser } = await import("@/lib/store/users");

const ROUNDS = Number(process.argv[2] ?? 50);
const WARMUP = 3;

/** A typical dev-server error group: a message line and a short stack, a few hundred bytes. */
const stackOf = (index: number) =>
  [
    `✖ Error: Uncaught TypeError: Cannot read properties of undefined (reading 'author') #${index}`,
    ...Array.from({ length: 6 }, (_, frame) => `    at handler${frame} (../convex/messages.ts:${10 + frame}:${index % 80})`),
  ].join("\n");

const db = await getStore();
const user = await insertUser(db, { name: "Bench", email: `bench-${Date.now()}@example.com` });
const token = generateApiToken();
await insertApiToken(db, { userId: user.id, tokenHash: hashApiToken(token), label: "bench" });
const project = await createProject(db, user.id, "Bench app");
for (let index = 0; index < ERROR_HISTORY_SIZE; index += 1) {
  const notification = buildErrorNotification({ message: stackOf(index), projectId: project.id, type: "backend-error", source: "backend-dev" });
  if (!(await sendErrorNotification(notification, { db }))) throw new Error("a notification was not stored");
}

/** Milliseconds from the request to the last byte of the 200th event. */
async function replayOnce(): Promise<number> {
  const abort = new AbortController();
  const started = performance.now();
  const request = new Request(`http://localhost/api/projects/${project.id}/errors/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: abort.signal,
  });
  const response = await GET(request, { params: Promise.resolve({ id: project.id }) });
  if (response.status !== 200 || !response.body) throw new Error(`stream answered ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let events = 0;
  while (events < ERROR_HISTORY_SIZE) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`stream ended after ${events} events`);
    text += decoder.decode(value, { stream: true });
    // An event is complete at its blank line; count and drop the complete ones.
    const end = text.lastIndexOf("\n\n");
    if (end === -1) continue;
    // Every event frame is `id: …\nevent: …\ndata: …`; the greeting and heartbeats have no `event:`.
    events += text.slice(0, end).split("\nevent: ").length - 1;
    text = text.slice(end + 2);
  }
  const elapsed = performance.now() - started;
  abort.abort();
  await reader.cancel();
  return elapsed;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

for (let round = 0; round < WARMUP; round += 1) await replayOnce();
const times: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) times.push(await replayOnce());
times.sort((a, b) => a - b);
console.log(`replay of ${ERROR_HISTORY_SIZE} stored errors to a new SSE subscriber (PGlite, ${ROUNDS} rounds after ${WARMUP} warm-up)`);
console.log(`  p50 ${percentile(times, 50).toFixed(1)} ms   p90 ${percentile(times, 90).toFixed(1)} ms   min ${times[0].toFixed(1)} ms   max ${times.at(-1)?.toFixed(1)} ms`);
await closeStore();
fs.rmSync(process.env.DATA_DIR, { recursive: true, force: true });
