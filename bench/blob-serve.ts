/**
 * Public blob GET: this service (the server `npm start` runs, scripts/server.mjs) against a plain
 * Node file server serving the same files, for 4 KB and 200 KB files with 20 keep-alive
 * connections. Prints req/s, p50/p99 latency and whether every response carried Content-Length,
 * each figure beside the plain server's, measured in the same run (per size the two alternate twice).
 * Run: npx tsx bench/blob-serve.ts [seconds per case=6]   (builds the app first when stale, as `npm start` does)
 */
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { startProductServer } from "../tests/e2e/server";

const SECONDS = Number(process.argv[2] ?? 6);
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

// The reference: what a hand-written Node static file server does (stat, headers, stream the file).
const PLAIN_SERVER = `
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
const root = process.argv[1];
http.createServer((request, response) => {
  const file = path.join(root, path.normalize(request.url));
  fs.stat(file, (error, stat) => {
    if (error || !stat.isFile()) return response.writeHead(404).end();
    response.writeHead(200, { "content-type": "image/png", "content-length": stat.size, etag: '"' + stat.mtimeMs + '"' });
    if (request.method === "HEAD") return response.end();
    fs.createReadStream(file).pipe(response);
  });
}).listen(0, "127.0.0.1", function () { console.log("ready " + this.address().port); });
`;

/** The plain server, answering once it listens. */
async function startPlainServer(root: string): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", PLAIN_SERVER, root], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (chunk: Buffer) => resolve(Number(/ready (\d+)/.exec(chunk.toString())![1])));
    child.once("exit", (code) => reject(new Error(`The plain server exited (${code})`)));
  });
  return { port, stop: () => child.kill() };
}

/** One stretch of load: each request's latency, and what was wrong with some. */
interface Sample {
  latencies: number[];
  seconds: number;
  withoutContentLength: number;
  failures: number;
}

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  withoutContentLength: number;
  failures: number;
}

/** `CONNECTIONS` keep-alive connections, each sending its next GET when the previous body is read. */
async function load(port: number, paths: string[], seconds: number): Promise<Sample> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies: number[] = [];
  let withoutContentLength = 0;
  let failures = 0;
  const get = (requestPath: string) =>
    new Promise<void>((resolve) => {
      const request = http.get({ host: "127.0.0.1", port, path: requestPath, agent }, (response) => {
        if (response.statusCode !== 200) failures++;
        if (response.headers["content-length"] === undefined) withoutContentLength++;
        response.on("data", () => undefined);
        response.on("end", resolve);
      });
      request.on("error", () => {
        failures++;
        resolve();
      });
    });
  const run = async (until: number, record: boolean) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, connection) => {
        for (let i = connection; performance.now() < until; i += CONNECTIONS) {
          const start = performance.now();
          await get(paths[(next++ + i) % paths.length]);
          if (record) latencies.push(performance.now() - start);
        }
      }),
    );
  };
  await run(performance.now() + 1000, false);
  failures = 0;
  withoutContentLength = 0;
  const start = performance.now();
  await run(start + seconds * 1000, true);
  const elapsed = performance.now() - start;
  agent.destroy();
  return { latencies, seconds: elapsed / 1000, withoutContentLength, failures };
}

function summarize(results: Sample[]): LoadResult {
  const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
  const seconds = results.reduce((sum, result) => sum + result.seconds, 0);
  return {
    requestsPerSecond: latencies.length / seconds,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    withoutContentLength: results.reduce((sum, result) => sum + result.withoutContentLength, 0),
    failures: results.reduce((sum, result) => sum + result.failures, 0),
  };
}

const files = await seedBlobs();
// `npm start` on the seeded DATA_DIR; a first start may build the app.
const service = await startProductServer({ dataDir, timeoutMs: 15 * 60_000 });
const servicePort = Number(new URL(service.baseUrl).port);
const plain = await startPlainServer(path.join(dataDir, "blobs", "objects"));
try {
  console.log(
    `blob GET bench: node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)} at start; ` +
      `${CONNECTIONS} connections, ${SECONDS} s per case, client in this process`,
  );
  const row = (name: string, result: LoadResult) =>
    `${name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
    `without Content-Length ${result.withoutContentLength}, failed ${result.failures}`;
  for (const size of SIZES) {
    const { servicePaths, plainPaths } = files.get(size.label)!;
    // Alternating halves, so a burst of load from elsewhere on the machine hits both servers.
    const halves: Sample[][] = [[], []];
    for (let round = 0; round < 2; round++) {
      halves[0].push(await load(servicePort, servicePaths, SECONDS / 2));
      halves[1].push(await load(plain.port, plainPaths, SECONDS / 2));
    }
    const [ours, reference] = halves.map(summarize);
    console.log(`${size.label} files`);
    console.log(`  ${row("this service     ", ours)}`);
    console.log(`  ${row("plain Node server", reference)}`);
    console.log(`  ratio: ${((100 * ours.requestsPerSecond) / reference.requestsPerSecond).toFixed(0)} % of plain Node's req/s (goal >= 50 %)`);
  }
} finally {
  await service.stop();
  plain.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
