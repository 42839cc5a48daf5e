/**
 * Manifest requests to the Expo Updates endpoint (GET /api/projects/<id>/updates) of the server
 * `npm start` runs, with 20 keep-alive connections from wrk in its own process (bench/http-load.ts):
 * p50/p99 latency, requests per second and server CPU per request for a manifest answer, a signed
 * manifest, an Android manifest and a `noUpdateAvailable` directive, beside a plain blob GET (one
 * of the manifest's 4 KB assets) and GET /api/health of the same server for reference, the cases
 * alternating round by round. The published bundle's manifest lists 40 assets, like a small app
 * with icons and fonts, stored in the server's blob store (bench/blob-serve.ts measures that path).
 * Run: npx tsx bench/updates.ts [seconds per round=3] [rounds=3]   (builds the app first when stale, as `npm start` does)
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startProductServer } from "../tests/e2e/server";
import { cpuMicrosPerRequest, interleaved, loadAverage, pidsWithEnv, requestsPerSecond, requireWrk, runWrk } from "./http-load";

const SECONDS_PER_ROUND = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 3);
const CLIENTS = 20;
const ASSETS = 40;
const RUNTIME = "1.0.0";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-updates-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false" });

/**
 * Stores one commit's iOS and Android bundles for two projects (one signing) in the store, then closes it: the embedded
 * database admits one process. The owner is the demo user, whose sign-in link the server prints
 * at start (what the start helper waits for).
 */
async function seed(): Promise<{ plain: string; signed: string; updateId: string; assetPath: string }> {
  const { seedDemoIfEmpty } = await import("@/lib/auth/seed");
  const { createUpdateManifest } = await import("@/lib/bundles/manifest");
  const { getStore } = await import("@/lib/store");
  const { insertProject } = await import("@/lib/store/projects");
  const { insertRelease, upsertBundleUpdate } = await import("@/lib/store/updates");
  const { ensureSigningCertificate } = await import("@/lib/updates/signing");
  const { resetProcessSingletons } = await import("@/lib/singletons");
  const { getBlobStore } = await import("@/lib/blob");
  const db = await getStore();
  const demo = await seedDemoIfEmpty(db);
  if (!demo) throw new Error("The bench's store is not empty.");
  const bundle = crypto.randomBytes(2_000_000);
  const assets = await Promise.all(
    Array.from({ length: ASSETS }, async () => {
      const bytes = crypto.randomBytes(4096);
      const key = crypto.createHash("md5").update(bytes).digest("hex");
      const { url } = await getBlobStore().put(`bundles/bench/abcdef1/assets/${key}`, bytes, { access: "public", contentType: "image/png" });
      return { bytes, key, type: "png", contentType: "image/png", url };
    }),
  );
  // The plain project's iOS update, which the noUpdateAvailable case runs.
  let updateId = "";
  const ids: string[] = [];
  for (const name of ["plain", "signed"]) {
    const project = name === "plain" ? demo.project : await insertProject(db, { ownerId: demo.project.ownerId, name });
    const createdAt = new Date();
    for (const platform of ["ios", "android"]) {
      const manifest = createUpdateManifest({
        projectId: project.id,
        platform,
        commitSha: "abcdef1",
        commitMessage: "Bench",
        runtimeVersion: RUNTIME,
        createdAt,
        launchAsset: { bytes: Buffer.concat([bundle, Buffer.from(platform)]), url: `https://blobs.example.com/${platform}/index.js` },
        assets,
        expoConfig: { name: "Bench app", slug: "bench-app", version: "1.0.0", runtimeVersion: RUNTIME },
      });
      // Stored directly, not published: the launch assets' example URLs would fail the delivery check.
      const stored = { projectId: project.id, platform, commitSha: "abcdef1", commitMessage: "Bench", runtimeVersion: RUNTIME };
      await upsertBundleUpdate(db, { ...stored, updateId: manifest.id, manifest: JSON.stringify(manifest), size: bundle.byteLength, createdAt });
      await insertRelease(db, { ...stored, channel: "main" });
      if (platform === "ios" && name === "plain") updateId = manifest.id;
    }
    if (name === "signed") await ensureSigningCertificate(db, project.id);
    ids.push(project.id);
  }
  await resetProcessSingletons();
  return { plain: ids[0], signed: ids[1], updateId, assetPath: new URL(assets[0].url).pathname };
}

/** One request per case before the load: each answers 200 with what it should, or the bench stops. */
async function checkAnswers(origin: string, cases: { label: string; path: string; headers: Record<string, string> }[]): Promise<void> {
  for (const { label, path: requestPath, headers } of cases) {
    const response = await fetch(origin + requestPath, { headers });
    const body = await response.text();
    const expected = label === "noUpdateAvailable" ? '"noUpdateAvailable"' : label.includes("manifest") ? '"launchAsset"' : "";
    if (response.status !== 200 || !body.includes(expected) || (label.startsWith("signed") && !body.includes("expo-signature"))) {
      throw new Error(`${label}: answered ${response.status}: ${body.slice(0, 300)}`);
    }
  }
}

const ids = await seed();
const server = await startProductServer({ dataDir, timeoutMs: 15 * 60_000 });
try {
  const protocol = { "expo-protocol-version": "1", "expo-platform": "ios", "expo-runtime-version": RUNTIME, accept: "multipart/mixed" };
  const updates = (id: string) => `/api/projects/${id}/updates`;
  const cases: { label: string; path: string; headers: Record<string, string> }[] = [
    { label: "manifest", path: updates(ids.plain), headers: protocol },
    { label: "android manifest", path: updates(ids.plain), headers: { ...protocol, "expo-platform": "android" } },
    { label: "signed manifest", path: updates(ids.signed), headers: { ...protocol, "expo-expect-signature": 'sig, keyid="main", alg="rsa-v1_5-sha256"' } },
    { label: "noUpdateAvailable", path: updates(ids.plain), headers: { ...protocol, "expo-current-update-id": ids.updateId } },
    // What a phone fetches next: an asset of the manifest, a plain public blob GET.
    { label: "blob GET (4 KB asset)", path: ids.assetPath, headers: {} },
    // The reference: the cheapest route of the same server (one trivial query).
    { label: "(GET /api/health)", path: "/api/health", headers: {} },
  ];
  requireWrk();
  await checkAnswers(server.baseUrl, cases);
  const pids = () => pidsWithEnv("DATA_DIR", dataDir);
  const targets = Object.fromEntries(cases.map(({ label, path: requestPath, headers }) => [label, { origin: server.baseUrl, paths: [requestPath], headers, pids }]));
  console.log(
    `${CLIENTS} connections from wrk (1 thread, its own process), ${ROUNDS} interleaved rounds of ${SECONDS_PER_ROUND} s per case, ` +
      `${os.cpus().length} cores, load average ${loadAverage()} at start`,
  );
  const { figures, loadAverages } = await interleaved(targets, {
    rounds: ROUNDS,
    measure: (target) => runWrk(target, CLIENTS, SECONDS_PER_ROUND),
    warmUp: (target) => runWrk(target, CLIENTS, 1),
  });
  for (const { label } of cases) {
    const result = figures[label];
    console.log(
      `${label.padEnd(22)} ${requestsPerSecond(result).toFixed(0).padStart(6)} req/s  p50 ${result.p50Ms.toFixed(1)} ms  p99 ${result.p99Ms.toFixed(1)} ms  ` +
        `server CPU ${cpuMicrosPerRequest(result).toFixed(0)} µs per request  failures ${result.failures}`,
    );
  }
  console.log(`load average per round: ${loadAverages.join(", ")}`);
} finally {
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
