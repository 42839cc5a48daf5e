/**
 * Public blob GET: this service (the server `npm start` runs, scripts/server.mjs) against a plain
 * Node file server serving the same files, for 4 KB and 200 KB files with 20 keep-alive
 * connections. Prints req/s, p50/p99 latency and whether every response carried Content-Length,
 * each figure beside the plain server's, measured in the same run (the two alternate per size).
 * Run: npx tsx bench/blob-serve.ts [seconds per case=5]   (builds the app first when stale, as `npm start` does)
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const SECONDS = Number(process.argv[2] ?? 5);
const CONNECTIONS = 20;
const FILES_PER_SIZE = 50;
const SIZES = [
  { label: "4 KB", bytes: 4 * 1024 },
  { label: "200 KB", bytes: 200 * 1024 },
];
const ROOT = path.resolve(import.meta.dirname, "..");

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-blob-serve-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false" });

/** What both servers are asked for: per size, the service's paths and the plain server's paths of the same bytes. */
interface Files {
  servicePaths: string[];
  plainPaths: string[];
}

/** Puts the files through the blob store, then closes the store: the embedded database admits one process. */
async function seedBlobs(publicBaseUrl: string): Promise<Map<string, Files>> {
  process.env.PUBLIC_BASE_URL = publicBaseUrl;
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
}).listen(Number(process.argv[2]), "127.0.0.1", () => console.log("ready"));
`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitUntilAnswers(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`The server exited (${child.exitCode}):\n${output().slice(-3000)}`);
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`No answer from ${url} within ${timeoutMs} ms:\n${output().slice(-3000)}`);
}

function startProcess(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  // Own process group: stopping `npm start`'s launcher reaches the server it spawned.
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM");
  const forced = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
  await exited;
  clearTimeout(forced);
}

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  withoutContentLength: number;
  failures: number;
}

/** `CONNECTIONS` keep-alive connections, each sending its next GET when the previous body is read. */
async function load(port: number, paths: string[], seconds: number): Promise<LoadResult> {
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
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / (elapsed / 1000),
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    withoutContentLength,
    failures,
  };
}

const servicePort = await freePort();
const plainPort = await freePort();
const files = await seedBlobs(`http://127.0.0.1:${servicePort}`);
const service = startProcess([path.join(ROOT, "scripts", "start.mjs")], {
  PORT: String(servicePort),
  PUBLIC_BASE_URL: `http://127.0.0.1:${servicePort}`,
  DATA_DIR: dataDir,
  NODE_ENV: "production",
  NEXT_TELEMETRY_DISABLED: "1",
});
const plain = startProcess(["--input-type=module", "-e", PLAIN_SERVER, path.join(dataDir, "blobs", "objects"), String(plainPort)], {});
try {
  // A first start may build the app.
  await waitUntilAnswers(`http://127.0.0.1:${servicePort}/api/health`, service.child, service.output, 15 * 60_000);
  await waitUntilAnswers(`http://127.0.0.1:${plainPort}/`, plain.child, plain.output, 30_000);
  console.log(
    `blob GET bench: node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)} at start; ` +
      `${CONNECTIONS} connections, ${SECONDS} s per case, client in this process`,
  );
  const row = (name: string, result: LoadResult) =>
    `${name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
    `without Content-Length ${result.withoutContentLength}, failed ${result.failures}`;
  for (const size of SIZES) {
    const { servicePaths, plainPaths } = files.get(size.label)!;
    const ours = await load(servicePort, servicePaths, SECONDS);
    const reference = await load(plainPort, plainPaths, SECONDS);
    console.log(`${size.label} files`);
    console.log(`  ${row("this service     ", ours)}`);
    console.log(`  ${row("plain Node server", reference)}`);
    console.log(`  ratio: ${((100 * ours.requestsPerSecond) / reference.requestsPerSecond).toFixed(0)} % of plain Node's req/s (goal >= 50 %)`);
  }
} finally {
  await stop(service.child);
  await stop(plain.child);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
