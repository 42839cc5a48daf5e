/**
 * POST /api/assets/upload end to end (multipart parse, spool, content check, sandbox staging,
 * blob put, manifest commit) on the embedded defaults: fs blob store, PGlite, local sandbox.
 * Prints the throughput of single 10 MB uploads and the RSS growth during 10 concurrent ones.
 * Run: npx tsx bench/upload.ts [rounds=5]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
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
const { getSandboxProvider } = await import("@/lib/sandbox");
const { closeStore, getStore } = await import("@/lib/store");
const { insertProject, updateProjectSandbox } = await import("@/lib/store/projects");
const { createTestUser } = await import("../tests/helpers/users");
const { multipartBody, streamingRequest } = await import("../tests/assets/multipart");
const { pngChunks } = await import("../tests/assets/samples");

const db = await getStore();
const { user, headers } = await createTestUser(db, "Bench");
const sandbox = await getSandboxProvider().create();
const project = await insertProject(db, { ownerId: user.id, name: "bench" });
await updateProjectSandbox(db, project.id, { sandboxId: sandbox.sandboxId, previewUrl: null });

// One 10 MB PNG shared by every request, sent in 64 KiB views: the client adds no memory per request.
const png = Buffer.concat([...pngChunks(FILE_BYTES)]);
function* slices(): Generator<Uint8Array> {
  for (let offset = 0; offset < png.length; offset += SLICE_BYTES) yield png.subarray(offset, offset + SLICE_BYTES);
}

async function upload(filename: string): Promise<void> {
  const body = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename, body: slices() }]);
  const response = await POST(streamingRequest("http://localhost:3000/api/assets/upload", body, headers), { params: Promise.resolve({}) } as never);
  if (response.status !== 200) throw new Error(`upload failed: ${response.status} ${await response.text()}`);
}

const rssMB = () => process.memoryUsage.rss() / MB;
/** JS heap plus Buffer/ArrayBuffer memory: where upload bytes would sit if anything buffered them. */
const liveMB = () => {
  const usage = process.memoryUsage();
  return (usage.heapUsed + usage.arrayBuffers) / MB;
};
const maxRssMB = () => process.resourceUsage().maxRSS / 1024;

// Warm up the code paths with a small file, so the concurrent phase starts from a heap that has
// never held a 10 MB upload and its growth is the uploads' own.
const small = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: "warmup.png", body: pngChunks(4096) }]);
await POST(streamingRequest("http://localhost:3000/api/assets/upload", small, headers), { params: Promise.resolve({}) } as never);

const concurrentUploads = (round: string) =>
  Promise.all(Array.from({ length: CONCURRENT }, (_, index) => upload(`${round}-${index}.png`)));

// 1. Time and RSS, sampled cheaply so the uploads run at full speed.
gc();
const baseline = rssMB();
const maxBefore = maxRssMB();
let peak = baseline;
const rssSampler = setInterval(() => (peak = Math.max(peak, rssMB())), 2);
const started = performance.now();
await concurrentUploads("timed");
const elapsed = performance.now() - started;
clearInterval(rssSampler);
peak = Math.max(peak, rssMB());
console.log(`${CONCURRENT} concurrent 10 MB uploads to one project: ${elapsed.toFixed(0)} ms (${((CONCURRENT * FILE_BYTES) / MB / (elapsed / 1000)).toFixed(0)} MB/s aggregate)`);
console.log(`RSS baseline ${baseline.toFixed(1)} MB, sampled peak ${peak.toFixed(1)} MB: growth ${(peak - baseline).toFixed(1)} MB (process max-RSS grew ${Math.max(0, maxRssMB() - maxBefore).toFixed(1)} MB)`);

// 2. Live memory: each sample collects garbage first, so it counts what the uploads hold.
gc();
const liveBaseline = liveMB();
let livePeak = liveBaseline;
const liveSampler = setInterval(() => {
  gc();
  livePeak = Math.max(livePeak, liveMB());
}, 10);
await concurrentUploads("sampled");
clearInterval(liveSampler);
console.log(`live heap + buffers during ${CONCURRENT} concurrent uploads: baseline ${liveBaseline.toFixed(1)} MB, peak ${livePeak.toFixed(1)} MB, growth ${(livePeak - liveBaseline).toFixed(1)} MB`);

// 3. One upload at a time.
const timings: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const roundStart = performance.now();
  await upload(`single-${round}.png`);
  timings.push(performance.now() - roundStart);
}
timings.sort((a, b) => a - b);
const median = timings[Math.floor(timings.length / 2)];
console.log(`single 10 MB upload: median ${median.toFixed(0)} ms (${(FILE_BYTES / MB / (median / 1000)).toFixed(0)} MB/s), best ${timings[0].toFixed(0)} ms, worst ${timings.at(-1)!.toFixed(0)} ms over ${ROUNDS} rounds`);

await getSandboxProvider().kill(sandbox.sandboxId);
await closeStore();
fs.rmSync(dataDir, { recursive: true, force: true });
