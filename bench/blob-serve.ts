/**
 * Public blob GET: this service (the server `npm start` runs, scripts/server.mjs) against a plain
 * Node file server (bench/plain-node-server.mjs: stat, then stream the file with the same headers)
 * serving the same files, for 4 KB and 200 KB files with 20 keep-alive connections. The load
 * comes from wrk in its own process (bench/http-load.ts); the two servers alternate, round by
 * round, in the same run. Prints req/s, p50/p99 latency and the ratio, with the load average.
 * Update manifests point at the same /blob URLs (bundle and assets are blob puts), so this is
 * their asset path too.
 * Run: npx tsx bench/blob-serve.ts [seconds per round=4] [rounds=3]   (builds the app first when stale, as `npm start` does)
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startProductServer } from "../tests/e2e/server";
import { cpuMicrosPerRequest, interleaved, type LoadFigures, loadAverage, pidsWithEnv, ratioLine, requestsPerSecond, requireWrk, runWrk, startPlainServer } from "./http-load";

const SECONDS_PER_ROUND = Number(process.argv[2] ?? 4);
const ROUNDS = Number(process.argv[3] ?? 3);
const CONNECTIONS = 20;
const FILES_PER_SIZE = 50;
const SIZES = [
  { label: "4 KB", bytes: 4 * 1024 },
  { label: "200 KB", bytes: 200 * 1024 },
];

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-blob-serve-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false" });

/** What both servers are asked for: per size, the service's paths and the plain server's paths of the same bytes. */
interface Files {
  servicePaths: string[];
  plainPaths: string[];
}

/** Puts the files through the blob store, then closes the store: the embedded database admits one process. */
async function seedBlobs(): Promise<Map<string, Files>> {
  const { getBlobStore } = await import("@/lib/blob");
  const { resetProcessSingletons } = await import("@/lib/singletons");
  const store = getBlobStore();
  const bySize = new Map<string, Files>();
  for (const size of SIZES) {
    const files: Files = { servicePaths: [], plainPaths: [] };
    for (let i = 0; i < FILES_PER_SIZE; i++) {
      const put = await store.put(`bench/${size.bytes}/${i}.png`, crypto.randomBytes(size.bytes), { access: "public" });
      const version = put.etag.slice(1, -1);
      files.servicePaths.push(new URL(put.url).pathname);
      files.plainPaths.push(`/${version.slice(0, 2)}/${version}`);
    }
    bySize.set(size.label, files);
  }
  await resetProcessSingletons();
  return bySize;
}

/** One answer of the service, checked for what its fast path must keep: Content-Length, ETag, Range, 304. */
async function checkAnswers(origin: string, blobPath: string, bytes: number): Promise<void> {
  const full = await fetch(origin + blobPath);
  const etag = full.headers.get("etag");
  if (full.status !== 200 || full.headers.get("content-length") !== String(bytes) || !etag || (await full.arrayBuffer()).byteLength !== bytes) {
    throw new Error(`${blobPath}: unexpected answer ${full.status}, Content-Length ${full.headers.get("content-length")}, ETag ${etag}`);
  }
  const range = await fetch(origin + blobPath, { headers: { range: "bytes=10-19" } });
  const unchanged = await fetch(origin + blobPath, { headers: { "if-none-match": etag } });
  if (range.status !== 206 || (await range.arrayBuffer()).byteLength !== 10 || unchanged.status !== 304) {
    throw new Error(`${blobPath}: Range answered ${range.status}, If-None-Match answered ${unchanged.status}`);
  }
}

const files = await seedBlobs();
// `npm start` on the seeded DATA_DIR; a first start may build the app.
const service = await startProductServer({ dataDir, timeoutMs: 15 * 60_000 });
const plain = await startPlainServer("static", path.join(dataDir, "blobs", "objects"));
try {
  requireWrk();
  console.log(
    `blob GET bench: node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()} at start; ` +
      `wrk (1 thread, ${CONNECTIONS} connections) in its own process, ${ROUNDS} interleaved rounds of ${SECONDS_PER_ROUND} s per server and size`,
  );
  const row = (name: string, figures: LoadFigures) =>
    `${name}: ${requestsPerSecond(figures).toFixed(0)} req/s, p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms, ` +
    `server CPU ${cpuMicrosPerRequest(figures).toFixed(0)} µs per request, failed ${figures.failures}`;
  for (const size of SIZES) {
    const { servicePaths, plainPaths } = files.get(size.label)!;
    await checkAnswers(service.baseUrl, servicePaths[0], size.bytes);
    const { figures, loadAverages } = await interleaved(
      {
        service: { origin: service.baseUrl, paths: servicePaths, pids: () => pidsWithEnv("DATA_DIR", dataDir) },
        plain: { origin: plain.origin, paths: plainPaths, pids: () => [plain.pid] },
      },
      { rounds: ROUNDS, measure: (target) => runWrk(target, CONNECTIONS, SECONDS_PER_ROUND), warmUp: (target) => runWrk(target, CONNECTIONS, 1) },
    );
    console.log(`${size.label} files (Content-Length, ETag, Range and 304 checked on the service first)`);
    console.log(`  ${row("this service     ", figures.service)}`);
    console.log(`  ${row("plain Node server", figures.plain)}`);
    console.log(`  ${ratioLine(figures.service, figures.plain, "req", loadAverages)}`);
  }
} finally {
  await service.stop();
  plain.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
