/**
 * POST /api/assets/upload end to end (multipart parse, spool, content check, sandbox copy, blob
 * put, manifest commit) on the embedded defaults: fs blob store, PGlite, local sandbox, served
 * the way `npm start` serves it: the custom server's upload fast path (lib/fast-paths). Beside
 * each figure, the reference measured in the same run: a plain Node server that streams the same
 * request body to a file and fsyncs it. For comparison, the route handler as `next dev` runs it,
 * behind a minimal adapter that hands it the body as a web stream (no Next runtime). All are HTTP
 * servers in this process, fed by the same client over loopback.
 * Prints single 10 MB uploads (interleaved rounds), 10 concurrent ones, and RSS growth.
 * Run: npx tsx bench/upload.ts [rounds=5]
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import v8 from "node:v8";
import vm from "node:vm";

const ROUNDS = Number(process.argv[2] ?? 5);
const MB = 1024 * 1024;
const FILE_BYTES = 10 * MB;
const CONCURRENT = 10;
const SLICE_BYTES = 64 * 1024;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-upload-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false" });

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const { POST } = await import("@/app/api/assets/upload/route");
const { uploadFastPath } = await import("@/lib/fast-paths");
const { getSandboxProvider } = await import("@/lib/sandbox");
const { closeStore, getStore } = await import("@/lib/store");
const { insertProject, updateProjectSandbox } = await import("@/lib/store/projects");
const { createTestUser } = await import("../tests/helpers/users");
const { multipartBody } = await import("../tests/assets/multipart");
const { pngChunks } = await import("../tests/assets/samples");

const db = await getStore();
const { user, headers: authHeaders } = await createTestUser(db, "Bench");
const sandbox = await getSandboxProvider().create();
const project = await insertProject(db, { ownerId: user.id, name: "bench" });
await updateProjectSandbox(db, project.id, { sandboxId: sandbox.sandboxId, previewUrl: null });

/** What `npm start` runs for this path: the custom server's fast path. */
const service = http.createServer((req, res) => {
  if (!uploadFastPath(req, res)) res.writeHead(501).end();
});

/** The route handler: the Node request becomes a fetch Request whose body streams. */
const route = http.createServer((req, res) => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  const request = new Request(`http://localhost${req.url}`, {
    method: req.method,
    headers,
    body: Readable.toWeb(req) as ReadableStream<Uint8Array>,
    duplex: "half",
  } as RequestInit);
  void (async () => {
    const response = await POST(request, { params: Promise.resolve({}) } as never);
    res.writeHead(response.status, { "content-type": response.headers.get("content-type") ?? "text/plain" });
    res.end(Buffer.from(await response.arrayBuffer()));
  })();
});

/** The reference: the request body streamed to a file, fsynced, then removed after answering. */
const referenceDir = path.join(dataDir, "reference");
fs.mkdirSync(referenceDir);
const reference = http.createServer((req, res) => {
  const file = path.join(referenceDir, randomUUID());
  void (async () => {
    await pipeline(req, fs.createWriteStream(file));
    const handle = await fs.promises.open(file, "r");
    await handle.sync();
    await handle.close();
    res.end("{}");
    await fs.promises.rm(file);
  })();
});

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}
const targets = { service: await listen(service), route: await listen(route), reference: await listen(reference) };
type Target = keyof typeof targets;

// One 10 MB PNG shared by every request, sent in 64 KiB views: the client adds no memory per request.
const png = Buffer.concat([...pngChunks(FILE_BYTES)]);
function* slices(): Generator<Uint8Array> {
  for (let offset = 0; offset < png.length; offset += SLICE_BYTES) yield png.subarray(offset, offset + SLICE_BYTES);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT });

/** Sends the same multipart body to either server; fails unless it answers 200. */
function upload(target: Target, filename: string, file: () => Iterable<Uint8Array> = slices): Promise<void> {
  const body = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename, body: file() }]);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { agent, port: targets[target], path: "/api/assets/upload", method: "POST", headers: { ...authHeaders, "content-type": body.contentType } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          response.statusCode === 200 ? resolve() : reject(new Error(`${target} upload failed: ${response.statusCode} ${Buffer.concat(chunks).toString()}`)),
        );
      },
    );
    request.on("error", reject);
    Readable.fromWeb(body.stream as NodeWebReadableStream<Uint8Array>).pipe(request);
  });
}

const rssMB = () => process.memoryUsage.rss() / MB;
const mbPerSecond = (bytes: number, ms: number) => bytes / MB / (ms / 1000);
const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)} %`;

// Warm up both paths with a small file, so the measured phases start from a heap that has never
// held a 10 MB upload and their growth is the uploads' own.
for (const target of ["service", "route", "reference"] as const) await upload(target, "warmup.png", () => pngChunks(4096));

/** 10 concurrent uploads: elapsed time and sampled RSS growth over the baseline after a GC. */
async function concurrent(target: Target, round: string): Promise<{ ms: number; rssGrowth: number }> {
  gc();
  const baseline = rssMB();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMB())), 2);
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENT }, (_, index) => upload(target, `${round}-${index}.png`)));
  const ms = performance.now() - started;
  clearInterval(sampler);
  return { ms, rssGrowth: Math.max(peak, rssMB()) - baseline };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// 1. Single uploads, the two servers interleaved round by round.
// CPU time (this process: client and server alike) depends less on the machine's other load.
const single: Record<Target, number[]> = { service: [], route: [], reference: [] };
const singleCpu: Record<Target, number[]> = { service: [], route: [], reference: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const target of ["service", "route", "reference"] as const) {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    await upload(target, `single-${round}.png`);
    const cpu = process.cpuUsage(cpuBefore);
    single[target].push(performance.now() - started);
    singleCpu[target].push((cpu.user + cpu.system) / 1000);
  }
}
const singleService = median(single.service);
const singleReference = median(single.reference);
const singleRoute = median(single.route);
console.log(
  `single 10 MB upload, median of ${ROUNDS}: service ${singleService.toFixed(0)} ms (${mbPerSecond(FILE_BYTES, singleService).toFixed(0)} MB/s), ` +
    `plain Node ${singleReference.toFixed(0)} ms (${mbPerSecond(FILE_BYTES, singleReference).toFixed(0)} MB/s): ${percent(singleReference, singleService)} of the reference`,
);
console.log(
  `  the route handler without the fast path (next dev): ${singleRoute.toFixed(0)} ms (${mbPerSecond(FILE_BYTES, singleRoute).toFixed(0)} MB/s): ${percent(singleReference, singleRoute)} of the reference`,
);

console.log(
  `CPU time per single upload, median: service ${median(singleCpu.service).toFixed(0)} ms, route ${median(singleCpu.route).toFixed(0)} ms, ` +
    `plain Node ${median(singleCpu.reference).toFixed(0)} ms (all include the client's)`,
);

// 2. Ten concurrent uploads, twice per server, interleaved; the better round of each counts.
const runs: Record<"service" | "reference", { ms: number; rssGrowth: number }[]> = { service: [], reference: [] };
for (let round = 0; round < 2; round++) {
  for (const target of ["service", "reference"] as const) runs[target].push(await concurrent(target, `concurrent-${round}`));
}
const best = (target: keyof typeof runs) => runs[target].reduce((a, b) => (a.ms <= b.ms ? a : b));
const [concurrentService, concurrentReference] = [best("service"), best("reference")];
const aggregate = (ms: number) => mbPerSecond(CONCURRENT * FILE_BYTES, ms);
console.log(
  `${CONCURRENT} concurrent 10 MB uploads: service ${concurrentService.ms.toFixed(0)} ms (${aggregate(concurrentService.ms).toFixed(0)} MB/s), ` +
    `plain Node ${concurrentReference.ms.toFixed(0)} ms (${aggregate(concurrentReference.ms).toFixed(0)} MB/s): ${percent(concurrentReference.ms, concurrentService.ms)} of the reference`,
);
const growth = (target: keyof typeof runs) => runs[target].map((run) => `${run.rssGrowth.toFixed(0)} MB`).join(", ");
console.log(`RSS growth during the concurrent rounds: service ${growth("service")}; plain Node ${growth("reference")} (goal < 100 MB)`);

agent.destroy();
await Promise.all([service, route, reference].map((server) => new Promise((resolve) => server.close(resolve))));
await getSandboxProvider().kill(sandbox.sandboxId);
await closeStore();
fs.rmSync(dataDir, { recursive: true, force: true });
