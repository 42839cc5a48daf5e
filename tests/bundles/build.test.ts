import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlobStore, getBlobStore } from "@/lib/blob";
import { buildBundleInSandbox, buildStaticBundle, type BuildStaticBundleResult } from "@/lib/bundles/build";
import { DEFAULT_EXPORT_COMMAND } from "@/lib/bundles/export";
import { bundlePrefix } from "@/lib/bundles/paths";
import { registerSecret } from "@/lib/log";
import { APP_DIR, getSandboxProvider, SANDBOX_HOME, type Sandbox } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { insertProject } from "@/lib/store/projects";
import { PLATFORMS } from "@/lib/updates/streams";
import { createTestUser } from "../helpers/users";
import { directiveOf, manifestOf, requestUpdate } from "../updates/update-client";
import { addBinaryAssets, FIXTURE_ASSETS, fetchBlobUrl, listPathnames, md5, sha256Base64Url } from "./build-fixture";
import { expectExpoUpdatesV1Manifest } from "./expo-manifest";

const NOW = new Date("2026-11-23T12:00:00.000Z");
// The real export's output, kept for the tests about what happens around an export.
const SAVED_DIST = `${SANDBOX_HOME}/saved-dist`;
const HERMES_MAGIC = [0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f];
let sandbox: Sandbox;
let blob: BlobStore;
let head: string;
let first: BuildStaticBundleResult;

let projectId: string;
const build = (commitSha: string, options: Parameters<typeof buildBundleInSandbox>[2] = {}) =>
  buildBundleInSandbox(sandbox, { projectId, commitSha, commitMessage: "Add brand assets" }, { blob, now: () => NOW, ...options });
const copySavedDist = `cp -r ${SAVED_DIST} dist`;
const readSaved = (relative: string) => sandbox.files.read(`${SAVED_DIST}/${relative}`, { format: "bytes" });
const git = async (command: string) => (await sandbox.commands.run(command, { cwd: APP_DIR })).stdout.trim();

beforeAll(async () => {
  await resetProcessSingleton("sandboxProvider");
  sandbox = await getSandboxProvider().create({ template: "app" });
  blob = getBlobStore();
  const db = await getStore();
  projectId = (await insertProject(db, { ownerId: (await createTestUser(db, "Owner")).user.id, name: "Brand app" })).id;
  head = await addBinaryAssets(sandbox);
  // An uncommitted broken screen in the live tree: Expo Router bundles every file under app/, so
  // the build below only succeeds when it exports the commit, not the working tree.
  await sandbox.files.write(`${APP_DIR}/app/draft.tsx`, "export default function Draft( {\n");
  // No `platforms`: the default, iOS and Android in one export (the suite's only real export of both).
  first = await buildStaticBundle(
    { sandboxId: sandbox.sandboxId, projectId, commitSha: head, commitMessage: "Add brand assets" },
    { blob, now: () => NOW, exportCommand: `${DEFAULT_EXPORT_COMMAND} && cp -r dist ${SAVED_DIST}` },
  );
});

afterAll(async () => {
  await getSandboxProvider().kill(sandbox.sandboxId);
});

describe("buildStaticBundle (local sandbox, the real expo export, fs blob store)", () => {
  it("exports the requested commit apart from the live tree for iOS and Android, and uploads each one's Hermes bytecode byte for byte", async () => {
    const urls = (platform: string) => ({
      manifestUrl: expect.stringMatching(new RegExp(`/${platform}/manifest\\.json$`)),
      bundleUrl: expect.stringMatching(new RegExp(`/${platform}/index\\.js$`)),
    });
    expect(first).toEqual({ success: true, ...urls("ios"), platforms: { ios: urls("ios"), android: urls("android") } });
    if (!first.success) return;
    expect(await git("git status --porcelain")).toBe("?? app/draft.tsx");
    expect(await sandbox.files.exists(`${APP_DIR}/dist`)).toBe(false);
    expect(await git("git worktree list --porcelain")).not.toContain(".exports");

    const metadata = JSON.parse(new TextDecoder().decode(await readSaved("metadata.json")));
    const bundles = [];
    for (const platform of PLATFORMS) {
      expect(metadata.fileMetadata[platform].bundle, platform).toMatch(new RegExp(`^_expo/static/js/${platform}/.+\\.hbc$`));
      const exported = await readSaved(metadata.fileMetadata[platform].bundle);
      const bundle = await fetchBlobUrl(first.platforms[platform]!.bundleUrl);
      expect(bundle, platform).toMatchObject({ status: 200, contentType: "application/javascript" });
      expect([...bundle.bytes.subarray(0, 8)], platform).toEqual(HERMES_MAGIC);
      expect(Buffer.from(bundle.bytes).equals(Buffer.from(exported)), platform).toBe(true);
      expect(Buffer.from(bundle.bytes).includes("Made with care"), platform).toBe(true);
      bundles.push(Buffer.from(bundle.bytes));
    }
    // Each platform's own compilation (Platform.OS is inlined), not one bundle stored twice.
    expect(bundles[0].equals(bundles[1])).toBe(false);
  });

  it("uploads every asset the export lists, node_modules assets included, byte for byte", async () => {
    const prefix = bundlePrefix(projectId, head);
    const metadata = JSON.parse(new TextDecoder().decode(await readSaved("metadata.json")));
    const listed = [...new Set(PLATFORMS.flatMap((platform) => metadata.fileMetadata[platform].assets.map((asset: { path: string }) => asset.path)))];
    const platformFiles = PLATFORMS.flatMap((platform) => [`${platform}/index.js`, `${platform}/manifest.json`]);
    expect((await listPathnames(blob, prefix)).sort()).toEqual([...listed, "assetmap.json", ...platformFiles].map((name) => prefix + name).sort());
    for (const [file, bytes] of Object.entries(FIXTURE_ASSETS)) {
      expect(listed, file).toContain(`assets/${md5(bytes)}`);
      const stored = await fetchBlobUrl(`http://localhost:3000/blob/${prefix}assets/${md5(bytes)}`);
      expect(stored.status, file).toBe(200);
      expect(stored.contentType, file).toBe(file.endsWith(".ttf") ? "font/ttf" : "image/png");
      expect(Buffer.from(stored.bytes).equals(Buffer.from(bytes)), file).toBe(true);
    }
    const assetMap = JSON.parse(new TextDecoder().decode((await fetchBlobUrl(`http://localhost:3000/blob/${prefix}assetmap.json`)).bytes));
    const packageAsset = Object.values<{ httpServerLocation: string; fileHashes: string[] }>(assetMap).find((asset) =>
      asset.httpServerLocation.includes("node_modules/expo-router/assets"),
    );
    expect(packageAsset, "expo-router's file.png").toBeDefined();
    for (const hash of packageAsset!.fileHashes) expect(listed).toContain(`assets/${hash}`);
  });

  it("writes each platform an Expo Updates v1 manifest whose URLs resolve to the hashed bytes", async () => {
    if (!first.success) throw new Error(first.error);
    for (const platform of PLATFORMS) {
      const urls = first.platforms[platform]!;
      const served = await fetchBlobUrl(urls.manifestUrl);
      expect(served.contentType).toBe("application/json");
      const manifest = expectExpoUpdatesV1Manifest(JSON.parse(new TextDecoder().decode(served.bytes)));
      expect(manifest).toMatchObject({
        createdAt: NOW.toISOString(),
        runtimeVersion: "1.0.0", // templates/app/app.json
        metadata: { platform, commitSha: head, commitMessage: "Add brand assets" },
        extra: { expoClient: { name: "My App", slug: "my-app" } },
      });
      expect(manifest.launchAsset.url, platform).toBe(urls.bundleUrl);
      for (const entry of [manifest.launchAsset, ...manifest.assets]) {
        const file = await fetchBlobUrl(entry.url);
        expect(file.status).toBe(200);
        expect(entry.hash).toBe(sha256Base64Url(file.bytes));
        expect(file.contentType).toBe(entry.contentType);
      }
      const byKey = Object.fromEntries(manifest.assets.map((entry) => [entry.key, entry]));
      for (const [file, bytes] of Object.entries(FIXTURE_ASSETS)) {
        expect(byKey[md5(bytes)], `${platform} ${file}`).toMatchObject({ fileExtension: path.extname(file), url: expect.stringContaining(`/assets/${md5(bytes)}`) });
      }
    }
  });

  it("is published: the update URL answers each platform its own manifest, and an unknown channel noUpdateAvailable", async () => {
    if (!first.success) throw new Error(first.error);
    const served = Object.fromEntries(
      await Promise.all(PLATFORMS.map(async (platform) => [platform, await manifestOf(await requestUpdate(projectId, { "expo-platform": platform }))] as const)),
    );
    for (const platform of PLATFORMS) {
      const stored = JSON.parse(new TextDecoder().decode((await fetchBlobUrl(first.platforms[platform]!.manifestUrl)).bytes));
      expect(served[platform], platform).toEqual(stored);
      expect(served[platform].launchAsset.url, platform).toBe(first.platforms[platform]!.bundleUrl);
      const launch = await fetchBlobUrl(served[platform].launchAsset.url);
      expect([...launch.bytes.subarray(0, 8)], platform).toEqual(HERMES_MAGIC);
      expect(sha256Base64Url(launch.bytes), platform).toBe(served[platform].launchAsset.hash);
    }
    expect(served.ios.id).not.toBe(served.android.id);
    expect(served.ios.launchAsset.hash).not.toBe(served.android.launchAsset.hash);
    for (const platform of PLATFORMS) {
      expect(await directiveOf(await requestUpdate(projectId, { "expo-platform": platform, "expo-channel-name": "no-such-channel" })), platform).toEqual({
        type: "noUpdateAvailable",
      });
    }
  });

  it("uploads the asset map without build-machine paths", async () => {
    const stored = await fetchBlobUrl(`http://localhost:3000/blob/${bundlePrefix(projectId, head)}assetmap.json`);
    const assetMap = JSON.parse(new TextDecoder().decode(stored.bytes));
    const logo = Object.values<Record<string, unknown>>(assetMap).find((asset) => asset.name === "logo")!;
    const scaled = ["logo.png", "logo@2x.png", "logo@3x.png"].map((name) => FIXTURE_ASSETS[`assets/images/${name}` as keyof typeof FIXTURE_ASSETS]);
    expect(logo).toMatchObject({ __packager_asset: true, httpServerLocation: "/assets/assets/images", scales: [1, 2, 3], name: "logo", type: "png", fileHashes: scaled.map(md5) });
    expect(logo).not.toHaveProperty("files");
    expect(logo).not.toHaveProperty("fileSystemLocation");
    expect(JSON.stringify(assetMap)).not.toContain(process.env.DATA_DIR!);
    expect(JSON.stringify(assetMap)).not.toContain(".exports");
  });

  it("keeps the update id for the same project, commit and content, and puts at most `concurrency` files at once, the manifest last", async () => {
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
    const result = await build(head, { blob: counting, concurrency: 2, exportCommand: copySavedDist });
    if (!result.success || !first.success) throw new Error("build failed");
    expect(maxInFlight).toBe(2);
    // The manifests last (each platform's, in either order), after the asset map.
    expect(order.at(-3)).toBe("assetmap.json");
    expect(order.slice(-2).sort()).toEqual(["android/manifest.json", "ios/manifest.json"]);
    const manifestOf = async (url: string) => JSON.parse(new TextDecoder().decode((await fetchBlobUrl(url)).bytes));
    expect((await manifestOf(result.manifestUrl)).id).toBe((await manifestOf(first.manifestUrl)).id);
  });

  it("answers 422 with Expo's redacted error when the app does not build, and uploads nothing", async () => {
    registerSecret("s3cr3t-deploy-token-value");
    await sandbox.files.write(`${APP_DIR}/app/broken.tsx`, 'const token = "s3cr3t-deploy-token-value";\nexport default function Broken( {\n');
    const broken = await git('git add app/broken.tsx && git commit -q -m "Broken screen" && git rev-parse HEAD');
    const result = await build(broken);
    expect(result).toMatchObject({ success: false, code: "bundle_export_failed", status: 422 });
    if (result.success) return;
    expect(result.error).toMatch(/SyntaxError|Unexpected token/);
    expect(result.error).toContain("broken.tsx");
    expect(result.error).not.toContain("s3cr3t-deploy-token-value");
    expect(await listPathnames(blob, bundlePrefix(projectId, broken))).toEqual([]);
  });

  it("refuses commit ids that are not hex, unknown commits and unknown sandboxes, without running anything", async () => {
    for (const commitSha of ["../../etc", "HEAD", "abc"]) {
      expect(await build(commitSha, { exportCommand: "exit 99" })).toMatchObject({ success: false, code: "invalid_commit", status: 400 });
    }
    expect(await build("abcdef1234", { exportCommand: "exit 99" })).toMatchObject({ success: false, code: "commit_not_found", status: 404 });
    const missing = await buildStaticBundle({ sandboxId: "local-nope", projectId, commitSha: head, commitMessage: "" }, { blob });
    expect(missing).toMatchObject({ success: false, code: "sandbox_not_found" });
  });

  it("runs one build at a time per sandbox", async () => {
    const command = `echo start >> ${APP_DIR}/builds.log && ${copySavedDist} && echo end >> ${APP_DIR}/builds.log`;
    const results = await Promise.all([build(head, { exportCommand: command }), build(head, { exportCommand: command })]);
    expect(results.map((result) => result.success)).toEqual([true, true]);
    expect((await sandbox.files.read(`${APP_DIR}/builds.log`)).split("\n")).toEqual(["start", "end", "start", "end", ""]);
  });
});
