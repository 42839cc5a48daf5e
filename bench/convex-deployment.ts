/**
 * The emulated deployment as an app's backend (issue 16), on embedded PGlite:
 * - push time of 20 modules with the real `convex dev --once` (typecheck off), first push and a re-push of one changed module;
 * - queries per second on a 1,000-document table (ConvexHttpClient: one document by index, and all 1,000);
 * - mutation → subscriber update latency over the sync WebSocket (ConvexClient writer and reader).
 * Run: npx tsx bench/convex-deployment.ts [latency samples]
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import WebSocket from "ws";

// A throwaway data directory, set before the config is first read.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-convex-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";

const { ConvexClient, ConvexHttpClient } = await import("convex/browser");
const { anyApi } = await import("convex/server");
const { provisionManagedProject } = await import("@/lib/backend");
const { startEmulatorServer } = await import("@/lib/emulator/server");
const { closeStore } = await import("@/lib/store");

const MODULES = 20;
const DOCUMENTS = 1_000;
const samplesWanted = Number(process.argv[2] ?? 50);

const percentile = (samples: number[], q: number) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(q * samples.length))];
const ms = (value: number) => `${value.toFixed(1)} ms`;

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
export default defineSchema({ items: defineTable({ key: v.number(), label: v.string() }).index("by_key", ["key"]) });
`;

/** Module i: a query by key, a query of every item, a bulk insert and a label write. */
const moduleSource = (index: number, marker = "") => `import { v } from "convex/values";
import { mutation, query } from "./_generated/server";
// module ${index} ${marker}
export const one = query({ args: { key: v.number() }, handler: (ctx, { key }) => ctx.db.query("items").withIndex("by_key", (q) => q.eq("key", key)).unique() });
export const all = query({ args: {}, handler: (ctx) => ctx.db.query("items").collect() });
export const latest = query({ args: {}, handler: (ctx) => ctx.db.query("items").withIndex("by_key", (q) => q.eq("key", -1)).unique() });
export const seed = mutation({ args: { from: v.number(), count: v.number() }, handler: async (ctx, { from, count }) => {
  for (let key = from; key < from + count; key++) await ctx.db.insert("items", { key, label: "item " + key });
} });
export const mark = mutation({ args: { label: v.string() }, handler: async (ctx, { label }) => {
  const current = await ctx.db.query("items").withIndex("by_key", (q) => q.eq("key", -1)).unique();
  if (current) await ctx.db.patch(current._id, { label });
  else await ctx.db.insert("items", { key: -1, label });
} });
`;

const server = await startEmulatorServer();
const { identity } = server.emulator;
const project = await provisionManagedProject({ teamScopedToken: identity.teamToken, teamSlug: identity.teamSlug, projectName: "bench app" }, { provisionHost: server.baseUrl });
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "bench-convex-app-"));
const clients: { close(): Promise<void> }[] = [];
try {
  fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "bench-app", private: true, dependencies: { convex: "1.48.0" } }));
  fs.symlinkSync(path.resolve("node_modules"), path.join(cwd, "node_modules"), "dir");
  fs.mkdirSync(path.join(cwd, "convex"));
  fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
  for (let index = 0; index < MODULES; index++) fs.writeFileSync(path.join(cwd, "convex", `m${index}.ts`), moduleSource(index));

  const push = async () => {
    const started = performance.now();
    await promisify(execFile)(path.resolve("node_modules/.bin/convex"), ["dev", "--once", "--typecheck", "disable", "--url", project.deploymentUrl, "--admin-key", project.token], {
      cwd,
      env: { ...process.env, CI: "1", NO_COLOR: "1" },
    });
    return performance.now() - started;
  };
  console.log(`push of ${MODULES} modules (convex dev --once, first)     ${ms(await push())}`);
  fs.writeFileSync(path.join(cwd, "convex", "m0.ts"), moduleSource(0, "changed"));
  console.log(`push of ${MODULES} modules (convex dev --once, 1 changed) ${ms(await push())}`);

  const http = new ConvexHttpClient(project.deploymentUrl);
  for (let from = 0; from < DOCUMENTS; from += 100) await http.mutation(anyApi.m0.seed, { from, count: 100 });

  const throughput = async (name: string, calls: number, concurrency: number, run: (index: number) => Promise<unknown>) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < calls) await run(next++);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`${name.padEnd(52)} ${(calls / seconds).toFixed(0)} queries/s (${calls} calls, ${concurrency} at a time)`);
  };
  await throughput(`query one of ${DOCUMENTS} by index`, 500, 8, (index) => http.query(anyApi.m1.one, { key: index % DOCUMENTS }));
  await throughput(`query all ${DOCUMENTS} documents`, 50, 4, () => http.query(anyApi.m1.all, {}));

  const options = { webSocketConstructor: WebSocket as unknown as typeof globalThis.WebSocket, unsavedChangesWarning: false };
  const writer = new ConvexClient(project.deploymentUrl, options);
  const reader = new ConvexClient(project.deploymentUrl, options);
  clients.push(writer, reader);
  let waiting: { label: string; resolve: () => void } | null = null;
  reader.onUpdate(anyApi.m2.latest, {}, (item: { label: string } | null) => {
    if (waiting && item?.label === waiting.label) waiting.resolve();
  });
  const latencies: number[] = [];
  for (let sample = 0; sample < samplesWanted + 5; sample++) {
    const label = `mark ${sample}`;
    const seen = new Promise<void>((resolve) => (waiting = { label, resolve }));
    const started = performance.now();
    await Promise.all([writer.mutation(anyApi.m2.mark, { label }), seen]);
    // The first samples warm the worker and the connection.
    if (sample >= 5) latencies.push(performance.now() - started);
  }
  console.log(`mutation → subscriber update (sync WebSocket)         p50 ${ms(percentile(latencies, 0.5))}  p95 ${ms(percentile(latencies, 0.95))}  (n=${latencies.length})`);
} finally {
  await Promise.all(clients.map((client) => client.close()));
  await server.close();
  await closeStore();
  fs.rmSync(cwd, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
