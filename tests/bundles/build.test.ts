import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlobStore, getBlobStore } from "@/lib/blob";
import { buildBundleInSandbox, buildStaticBundle } from "@/lib/bundles/build";
import { bundlePrefix } from "@/lib/bundles/paths";
import { registerSecret } from "@/lib/log";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import { createLocalSandboxProvider } from "@/lib/sandbox/drivers/local";
import { expectExpoUpdatesV1Manifest } from "./expo-manifest";
import { addBinaryAssets, FIXTURE_ASSETS, fetchBlobUrl, listPathnames, md5, sha256Base64Url } from "./build-fixture";

const provider = createLocalSandboxProvider({ root: path.join(process.env.DATA_DIR!, "sandboxes") });
const NOW = new Date("2026-11-23T12:00:00.000Z");
let sandbox: Sandbox;
let blob: BlobStore;
let head: string;

const projectId = "7c1d2a52-1f0e-4b53-9f43-5d7b6c1e2f10";
const build = (commitSha: string, options: Parameters<typeof buildBundleInSandbox>[2] = {}) =>
  buildBundleInSandbox(sandbox, { projectId, commitSha, commitMessage: "Add brand assets" }, { blob, provider, now: () => NOW, ...options });

async function readDist(relative: string): Promise<Uint8Array> {
  return sandbox.files.read(`${APP_DIR}/dist/${relative}`, { format: "bytes" });
}

beforeAll(async () => {
  sandbox = await provider.create({ template: "app" });
  blob = getBlobStore();
  head = await addBinaryAssets(sandbox);
});

afterAll(async () => {
  await provider.kill(sandbox.sandboxId);
});

describe("buildStaticBundle (local sandbox, template export script, fs blob store)", () => {
  it("uploads exactly the spec layout, byte for byte", async () => {
    const result = await buildStaticBundle({ sandboxId: sandbox.sandboxId, projectId, commitSha: head, commitMessage: "Add brand assets" }, { blob, provider, now: () => NOW });
    const prefix = bundlePrefix(projectId, head);
    expect(result).toEqual({ success: true, manifestUrl: expect.stringMatching(/\/ios\/manifest\.json$/), bundleUrl: expect.stringMatching(/\/ios\/index\.js$/) });

    const assetFiles = Object.values(FIXTURE_ASSETS).map(md5);
    expect((await listPathnames(blob, prefix)).sort()).toEqual(
      [...assetFiles.map((hash) => `assets/${hash}`), "assetmap.json", "ios/index.js", "ios/manifest.json"].map((name) => prefix + name).sort(),
    );

    // The bundle is binary (not valid UTF-8): a text read would have changed it.
    const metadata = JSON.parse(new TextDecoder().decode(await readDist("metadata.json")));
    const exported = await readDist(metadata.fileMetadata.ios.bundle);
    expect(() => new TextDecoder("utf-8", { fatal: true }).decode(exported)).toThrow();
    const bundle = await fetchBlobUrl(result.success ? result.bundleUrl : "");
    expect(bundle).toMatchObject({ status: 200, contentType: "application/javascript" });
    expect(Buffer.from(bundle.bytes).equals(Buffer.from(exported))).toBe(true);

    for (const [file, bytes] of Object.entries(FIXTURE_ASSETS)) {
      const stored = await fetchBlobUrl(`http://localhost:3000/blob/${prefix}assets/${md5(bytes)}`);
      expect(stored.status, file).toBe(200);
      expect(stored.contentType, file).toBe(file.endsWith(".ttf") ? "font/ttf" : "image/png");
      expect(Buffer.from(stored.bytes).equals(Buffer.from(bytes)), file).toBe(true);
      expect(Buffer.from(await readDist(`assets/${md5(bytes)}`)).equals(Buffer.from(bytes)), file).toBe(true);
    }
  });

  it("writes an Expo Updates v1 manifest whose URLs resolve to the hashed bytes", async () => {
    const result = await build(head);
    if (!result.success) throw new Error(result.error);
    const served = await fetchBlobUrl(result.manifestUrl);
    expect(served.contentType).toBe("application/json");
    const manifest = expectExpoUpdatesV1Manifest(JSON.parse(new TextDecoder().decode(served.bytes)));

    expect(manifest).toMatchObject({
      createdAt: NOW.toISOString(),
      runtimeVersion: "1.0.0", // templates/app/app.json
      metadata: { commitSha: head, commitMessage: "Add brand assets" },
      extra: { expoClient: { name: "My App", slug: "my-app" } },
    });
    expect(manifest.launchAsset.url).toBe(result.bundleUrl);
    for (const entry of [manifest.launchAsset, ...manifest.assets]) {
      const file = await fetchBlobUrl(entry.url);
      expect(file.status).toBe(200);
      expect(entry.hash).toBe(sha256Base64Url(file.bytes));
      expect(file.contentType).toBe(entry.contentType);
    }
    const byKey = Object.fromEntries(manifest.assets.map((entry) => [entry.key, entry]));
    for (const [file, bytes] of Object.entries(FIXTURE_ASSETS)) {
      expect(byKey[md5(bytes)], file).toMatchObject({ fileExtension: path.extname(file), url: expect.stringContaining(`/assets/${md5(bytes)}`) });
    }
    // Same project, commit and content: same update id, so clients do not download it twice.
    const again = await build(head);
    const second = JSON.parse(new TextDecoder().decode((await fetchBlobUrl(again.success ? again.manifestUrl : "")).bytes));
    expect(second.id).toBe(manifest.id);
  });

  it("uploads the asset map without build-machine paths", async () => {
    await build(head);
    const stored = await fetchBlobUrl(`http://localhost:3000/blob/${bundlePrefix(projectId, head)}assetmap.json`);
    const assetMap = JSON.parse(new TextDecoder().decode(stored.bytes));
    const logo = Object.values<Record<string, unknown>>(assetMap).find((asset) => asset.name === "logo")!;
    const scaled = ["logo.png", "logo@2x.png", "logo@3x.png"].map((name) => FIXTURE_ASSETS[`assets/images/${name}` as keyof typeof FIXTURE_ASSETS]);
    expect(logo).toEqual({
      __packager_asset: true,
      httpServerLocation: "/assets/assets/images",
      scales: [1, 2, 3],
      hash: md5(Buffer.concat(scaled)),
      name: "logo",
      type: "png",
      fileHashes: scaled.map(md5),
    });
    expect(JSON.stringify(assetMap)).not.toContain(APP_DIR);
  });

  it("puts at most `concurrency` files at once and the manifest last", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const order: string[] = [];
    const counting: BlobStore = {
      ...blob,
      async put(pathname, body, options) {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await blob.put(pathname, body, options);
        } finally {
          inFlight -= 1;
          order.push(pathname.split("/").slice(3).join("/"));
        }
      },
    };
    const result = await build(head, { blob: counting, concurrency: 2 });
    expect(result.success).toBe(true);
    expect(maxInFlight).toBe(2);
    expect(order).toHaveLength(7);
    expect(order.slice(-2)).toEqual(["assetmap.json", "ios/manifest.json"]);
  });

  it("reports a failing export with the command's redacted message and uploads nothing", async () => {
    registerSecret("s3cr3t-deploy-token-value");
    const command = 'echo "bundling"; echo "Error: Unable to resolve module ./missing (token s3cr3t-deploy-token-value)" >&2; exit 3';
    const result = await build("abcdef1", { exportCommand: command });
    expect(result).toEqual({ success: false, code: "bundle_export_failed", error: expect.stringContaining("exit code 3") });
    if (result.success) return;
    expect(result.error).toContain("Unable to resolve module ./missing");
    expect(result.error).not.toContain("s3cr3t-deploy-token-value");
    expect(await listPathnames(blob, bundlePrefix(projectId, "abcdef1"))).toEqual([]);
  });

  it("reports the template export's own failure (a missing asset)", async () => {
    await sandbox.files.write(`${APP_DIR}/app/broken.tsx`, 'export const icon = require("../assets/images/missing.png");\n');
    try {
      const result = await build("abcdef2");
      expect(result).toMatchObject({ success: false, code: "bundle_export_failed" });
      expect(result.success || result.error).toContain('Unable to resolve asset "assets/images/missing.png"');
    } finally {
      await sandbox.files.remove(`${APP_DIR}/app/broken.tsx`);
    }
  });

  it("refuses commit ids that are not hex and unknown sandboxes, without running anything", async () => {
    for (const commitSha of ["../../etc", "HEAD", "abc"]) {
      expect(await build(commitSha, { exportCommand: "exit 99" })).toMatchObject({ success: false, code: "invalid_commit" });
    }
    const missing = await buildStaticBundle({ sandboxId: "local-nope", projectId, commitSha: head, commitMessage: "" }, { blob, provider });
    expect(missing).toMatchObject({ success: false, code: "sandbox_not_found" });
  });

  it("runs one build at a time per sandbox", async () => {
    const command = `echo start >> ${APP_DIR}/builds.log && node scripts/export-ios.mjs --output-dir dist --dump-assetmap && echo end >> ${APP_DIR}/builds.log`;
    const results = await Promise.all([build(head, { exportCommand: command }), build(head, { exportCommand: command })]);
    expect(results.map((result) => result.success)).toEqual([true, true]);
    expect((await sandbox.files.read(`${APP_DIR}/builds.log`)).split("\n")).toEqual(["start", "end", "start", "end", ""]);
  });
});
