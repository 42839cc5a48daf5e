/**
 * POST /api/assets/upload end to end (multipart parse, spool, content check, sandbox copy, blob
 * put, manifest commit) on the embedded defaults (fs blob store, PGlite, local sandbox), served
 * by the server `npm start` runs (its upload fast path, lib/fast-paths). The reference, measured
 * in the same run: a plain Node server (bench/plain-node-server.mjs) that parses the same
 * multipart body with busboy, hashes the file, writes it to disk and fsyncs it. The load comes
 * from a client process of its own (bench/batch-client.mjs): 10 MB PNGs, one upload at a time
 * (4 per round) and 10 at once (a batch of 10 per round), the two servers alternating round by round.
 * Prints uploads/s, MB/s, p50/p99, server CPU per upload, the ratio, the load average, and the
 * service's RSS growth under the concurrent uploads, and its CPU time per second at rest.
 * The sandbox is the host driver's (`SANDBOX_DRIVER=local-unwalled`): the default driver's copy into
 * a walled sandbox is the sandbox service's work (bench/sandbox-service.ts), not this server's.
 * Run: npx tsx bench/upload.ts [rounds=3]   (builds the app first when stale, as `npm start` does)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import { startProductServer } from "../tests/e2e/server";
import {
  cpuMicrosPerRequest,
  interleaved,
  type LoadFigures,
  loadAverage,
  pidsWithEnv,
  ratioLine,
  requestsPerSecond,
  restingCpuMillisPerSecond,
  runBatch,
  startPlainServer,
} from "./http-load";

const ROUNDS = Number(process.argv[2] ?? 3);
const MB = 1024 * 1024;
const FILE_BYTES = 10 * MB;
const CONCURRENT = 10;
/** Per round: one connection sends 4 uploads in turn; 10 connections send one each, all at once. */
const UPLOADS_PER_CONNECTION: Record<number, number> = { 1: 4, [CONCURRENT]: 1 };
const UPLOAD_PATH = "/api/assets/upload";
/** How long the service's CPU is counted with no request, after its first upload. */
const RESTING_SECONDS = 20;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-upload-"));
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-upload-work-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false", SANDBOX_DRIVER: "local-unwalled" });

/**
 * The demo user (whose sign-in link the server prints at start, what the start helper waits for)
 * with its API token, and its project with a sandbox; then the store is closed: the embedded
 * database admits one process. Answers the Authorization header to upload as that user.
 */
async function seed(): Promise<{ projectId: string; authorization: string }> {
  const { seedDemoIfEmpty } = await import("@/lib/auth/seed");
  const { getSandboxProvider } = await import("@/lib/sandbox");
  const { getStore } = await import("@/lib/store");
  const { updateProjectSandbox } = await import("@/lib/store/projects");
  const { resetProcessSingletons } = await import("@/lib/singletons");
  const db = await getStore();
  const demo = await seedDemoIfEmpty(db);
  if (!demo) throw new Error("The bench's store is not empty.");
  const sandbox = await getSandboxProvider().create();
  await updateProjectSandbox(db, demo.project.id, { sandboxId: sandbox.sandboxId, previewUrl: null });
  await resetProcessSingletons();
  return { projectId: demo.project.id, authorization: `Bearer ${demo.token}` };
}

/**
 * One multipart body per concurrent upload (their own filenames: uploads of one name replace each
 * other's asset), written to files the client streams. All share one boundary, so one Content-Type.
 */
async function writeBodies(projectId: string): Promise<{ files: string[]; contentType: string }> {
  const { multipartBody } = await import("../tests/assets/multipart");
  const { pngChunks } = await import("../tests/assets/samples");
  const png = Buffer.concat([...pngChunks(FILE_BYTES)]);
  const boundary = "bench-upload-boundary";
  const files: string[] = [];
  let contentType = "";
  for (let index = 0; index < CONCURRENT; index++) {
    const body = multipartBody([{ name: "projectId", body: projectId }, { name: "file", filename: `bench-${index}.png`, body: png }], { boundary });
    const file = path.join(workDir, `body-${index}`);
    await pipeline(Readable.fromWeb(body.stream as NodeWebReadableStream<Uint8Array>), fs.createWriteStream(file));
    files.push(file);
    contentType = body.contentType;
  }
  return { files, contentType };
}

/** Resident memory of processes, summed (Linux /proc), in MB. */
function rssMB(pids: number[]): number {
  let kilobytes = 0;
  for (const pid of pids) {
    try {
      kilobytes += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // Exited meanwhile.
    }
  }
  return kilobytes / 1024;
}

const { projectId, authorization } = await seed();
const bodies = await writeBodies(projectId);
const service = await startProductServer({ dataDir, timeoutMs: 15 * 60_000 });
const plain = await startPlainServer("upload", workDir);
const servicePids = () => pidsWithEnv("DATA_DIR", dataDir);
try {
  const headers = { authorization, "content-type": bodies.contentType };
  const first = await fetch(service.baseUrl + UPLOAD_PATH, { method: "POST", headers, body: fs.readFileSync(bodies.files[0]) });
  if (first.status !== 200) throw new Error(`The service refused the bench's upload: ${first.status} ${await first.text()}`);
  const targets = {
    service: { origin: service.baseUrl, paths: bodies.files.map(() => UPLOAD_PATH), method: "POST" as const, headers, bodyFiles: bodies.files, pids: servicePids },
    plain: { origin: plain.origin, paths: bodies.files.map(() => UPLOAD_PATH), method: "POST" as const, headers, bodyFiles: bodies.files, pids: () => [plain.pid] },
  };
  console.log(
    `upload bench: node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()} at start; 10 MB PNGs; ` +
      `client in its own process, ${ROUNDS} interleaved rounds per server and case`,
  );
  const row = (name: string, figures: LoadFigures) =>
    `${name}: ${requestsPerSecond(figures).toFixed(1)} uploads/s (${((requestsPerSecond(figures) * FILE_BYTES) / MB).toFixed(0)} MB/s), ` +
    `p50 ${figures.p50Ms.toFixed(0)} ms, p99 ${figures.p99Ms.toFixed(0)} ms, server CPU ${(cpuMicrosPerRequest(figures) / 1000).toFixed(0)} ms per upload, ` +
    `failed ${figures.failures}`;
  // Its timers and pollers (job queue, heartbeats, lease checks) take CPU from every upload.
  const resting = await restingCpuMillisPerSecond(servicePids(), RESTING_SECONDS);
  console.log(`the service at rest: ${resting.toFixed(1)} ms of CPU per second (over ${RESTING_SECONDS} s, load average ${loadAverage()})`);
  for (const connections of [1, CONCURRENT]) {
    const pids = servicePids();
    const rssBefore = rssMB(pids);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMB(pids))), 50);
    const { figures, loadAverages } = await interleaved(targets, {
      rounds: ROUNDS,
      measure: (target) => runBatch(target, connections, UPLOADS_PER_CONNECTION[connections]),
      warmUp: (target) => runBatch(target, connections, 1),
    });
    clearInterval(sampler);
    console.log(connections === 1 ? "one upload at a time" : `${connections} concurrent uploads`);
    console.log(`  ${row("this service     ", figures.service)}`);
    console.log(`  ${row("plain Node server", figures.plain)}`);
    console.log(`  ${ratioLine(figures.service, figures.plain, "uploads", loadAverages)}`);
    console.log(`  the service's RSS: ${rssBefore.toFixed(0)} MB before, at most ${rssPeak.toFixed(0)} MB meanwhile (goal: growth < 100 MB)`);
  }
} finally {
  await service.stop();
  plain.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(workDir, { recursive: true, force: true });
}
