/**
 * Manifest requests to the Expo Updates endpoint (GET /api/projects/<id>/updates) of the server
 * `npm start` runs, with 20 concurrent keep-alive clients: p50/p99 latency and requests per
 * second for a manifest answer, a signed manifest and a `noUpdateAvailable` directive, beside
 * GET /api/health of the same server for reference. The published bundle's manifest lists 40
 * assets, like a small app with icons and fonts.
 * Run: npx tsx bench/updates.ts [seconds per case=6]   (builds the app first when stale, as `npm start` does)
 */
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { startProductServer } from "../tests/e2e/server";

const SECONDS = Number(process.argv[2] ?? 6);
const CLIENTS = 20;
const ASSETS = 40;
const RUNTIME = "1.0.0";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-updates-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false" });

/**
 * Publishes one bundle for two projects (one signing) in the store, then closes it: the embedded
 * database admits one process. The owner is the demo user, whose sign-in link the server prints
 * at start (what the start helper waits for).
 */
async function seed(): Promise<{ plain: string; signed: string; updateId: string }> {
  const { seedDemoIfEmpty } = await import("@/lib/auth/seed");
  const { createUpdateManifest } = await import("@/lib/bundles/manifest");
  const { getStore } = await import("@/lib/store");
  const { insertProject } = await import("@/lib/store/projects");
  const { BUNDLE_PLATFORM, publishBundle } = await import("@/lib/updates/releases");
  const { ensureSigningCertificate } = await import("@/lib/updates/signing");
  const { resetProcessSingletons } = await import("@/lib/singletons");
  const db = await getStore();
  const demo = await seedDemoIfEmpty(db);
  if (!demo) throw new Error("The bench's store is not empty.");
  const bundle = crypto.randomBytes(2_000_000);
  const assets = Array.from({ length: ASSETS }, (_, index) => {
    const bytes = crypto.randomBytes(4096);
    const key = crypto.createHash("md5").update(bytes).digest("hex");
    return { bytes, key, type: "png", contentType: "image/png", url: `https://blobs.example.com/assets/${key}?i=${index}` };
  });
  let updateId = "";
  const ids: string[] = [];
  for (const name of ["plain", "signed"]) {
    const project = name === "plain" ? demo.project : await insertProject(db, { ownerId: demo.project.ownerId, name });
    const createdAt = new Date();
    const manifest = createUpdateManifest({
      projectId: project.id,
      commitSha: "abcdef1",
      commitMessage: "Bench",
      runtimeVersion: RUNTIME,
      createdAt,
      launchAsset: { bytes: bundle, url: "https://blobs.example.com/ios/index.js" },
      assets,
      expoConfig: { name: "Bench app", slug: "bench-app", version: "1.0.0", runtimeVersion: RUNTIME },
    });
    await publishBundle(db, {
      projectId: project.id,
      platform: BUNDLE_PLATFORM,
      commitSha: "abcdef1",
      commitMessage: "Bench",
      runtimeVersion: RUNTIME,
      updateId: manifest.id,
      manifest: JSON.stringify(manifest),
      size: bundle.byteLength,
      createdAt,
    });
    if (name === "signed") await ensureSigningCertificate(db, project.id);
    else updateId = manifest.id;
    ids.push(project.id);
  }
  await resetProcessSingletons();
  return { plain: ids[0], signed: ids[1], updateId };
}

interface Result {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** `CLIENTS` keep-alive clients, each sending its next request when the previous answer is read; 1 s warm-up. */
async function load(port: number, requestPath: string, headers: Record<string, string>, seconds: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  let failures = 0;
  const get = () =>
    new Promise<void>((resolve) => {
      const request = http.get({ host: "127.0.0.1", port, path: requestPath, headers, agent }, (response) => {
        if (response.statusCode !== 200) failures++;
        response.on("data", () => undefined);
        response.on("end", resolve);
      });
      request.on("error", () => {
        failures++;
        resolve();
      });
    });
  const run = (until: number, record: boolean) =>
    Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (performance.now() < until) {
          const start = performance.now();
          await get();
          if (record) latencies.push(performance.now() - start);
        }
      }),
    );
  await run(performance.now() + 1000, false);
  failures = 0;
  const start = performance.now();
  await run(start + seconds * 1000, true);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { requestsPerSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), failures };
}

const ids = await seed();
const server = await startProductServer({ dataDir, timeoutMs: 15 * 60_000 });
try {
  const port = Number(new URL(server.baseUrl).port);
  const protocol = { "expo-protocol-version": "1", "expo-platform": "ios", "expo-runtime-version": RUNTIME, accept: "multipart/mixed" };
  const updates = (id: string) => `/api/projects/${id}/updates`;
  const cases: { label: string; path: string; headers: Record<string, string> }[] = [
    { label: "manifest", path: updates(ids.plain), headers: protocol },
    { label: "signed manifest", path: updates(ids.signed), headers: { ...protocol, "expo-expect-signature": 'sig, keyid="main", alg="rsa-v1_5-sha256"' } },
    { label: "noUpdateAvailable", path: updates(ids.plain), headers: { ...protocol, "expo-current-update-id": ids.updateId } },
    // The reference: the cheapest route of the same server (one trivial query).
    { label: "(GET /api/health)", path: "/api/health", headers: {} },
  ];
  console.log(`${CLIENTS} concurrent clients, ${SECONDS} s per case, ${os.cpus().length} cores`);
  for (const { label, path: requestPath, headers } of cases) {
    const result = await load(port, requestPath, headers, SECONDS);
    console.log(
      `${label.padEnd(18)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  failures ${result.failures}`,
    );
  }
} finally {
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
