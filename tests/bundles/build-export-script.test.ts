import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHostApp, FIXTURE_ASSETS, md5, runExportScript } from "./build-fixture";

let app: string;
const exportApp = (...args: string[]) => runExportScript(app, ...args);
const readJson = async (relative: string) => JSON.parse(await fs.readFile(path.join(app, relative), "utf8"));

beforeAll(async () => {
  app = await createHostApp();
});

afterAll(async () => {
  await fs.rm(app, { recursive: true, force: true });
});

describe("templates/app/scripts/export-ios.mjs (offline expo export stand-in)", () => {
  it("writes Expo's dist/ layout: hashed binary bundle, metadata.json, asset files, assetmap.json", async () => {
    const { code } = await exportApp("--platform", "ios", "--output-dir", "dist", "--dump-assetmap");
    expect(code).toBe(0);

    const metadata = await readJson("dist/metadata.json");
    const bundlePath: string = metadata.fileMetadata.ios.bundle;
    expect(metadata).toMatchObject({ version: 0, bundler: "metro" });
    expect(bundlePath).toMatch(/^_expo\/static\/js\/ios\/entry-[0-9a-f]{32}\.hbc$/);
    const bundle = await fs.readFile(path.join(app, "dist", bundlePath));
    expect(bundlePath).toContain(md5(bundle));
    expect(bundle[0]).toBe(0x89);
    expect(bundle.toString("latin1")).toContain("Welcome to your app");

    const logo = ["logo.png", "logo@2x.png", "logo@3x.png"].map((name) => FIXTURE_ASSETS[`assets/images/${name}` as keyof typeof FIXTURE_ASSETS]);
    const font = FIXTURE_ASSETS["assets/fonts/Brand.ttf"];
    // One entry per file of each asset, each asset once however often it is referenced.
    expect(metadata.fileMetadata.ios.assets).toEqual([
      { path: `assets/${md5(font)}`, ext: "ttf" },
      ...logo.map((bytes) => ({ path: `assets/${md5(bytes)}`, ext: "png" })),
    ]);
    expect((await fs.readdir(path.join(app, "dist", "assets"))).sort()).toEqual([...logo, font].map(md5).sort());
    for (const bytes of [...logo, font]) {
      expect((await fs.readFile(path.join(app, "dist", "assets", md5(bytes)))).equals(Buffer.from(bytes))).toBe(true);
    }

    // Metro's asset map: keyed by the asset hash (md5 over all scales); files named by fileHashes.
    const assetMap = await readJson("dist/assetmap.json");
    const logoHash = md5(Buffer.concat(logo));
    expect(Object.keys(assetMap).sort()).toEqual([logoHash, md5(font)].sort());
    const imagesDir = path.join(await fs.realpath(app), "assets", "images");
    expect(assetMap[logoHash]).toEqual({
      __packager_asset: true,
      fileSystemLocation: imagesDir,
      httpServerLocation: "/assets/assets/images",
      scales: [1, 2, 3],
      files: ["logo.png", "logo@2x.png", "logo@3x.png"].map((name) => path.join(imagesDir, name)),
      hash: logoHash,
      name: "logo",
      type: "png",
      fileHashes: logo.map(md5),
    });
  });

  it("writes no asset map without --dump-assetmap and replaces the previous output", async () => {
    await fs.writeFile(path.join(app, "dist", "stale.txt"), "old");
    expect((await exportApp("--output-dir", "dist")).code).toBe(0);
    await expect(fs.stat(path.join(app, "dist", "assetmap.json"))).rejects.toThrow();
    await expect(fs.stat(path.join(app, "dist", "stale.txt"))).rejects.toThrow();
  });

  it("fails like Metro on a missing asset and refuses other platforms", async () => {
    await fs.writeFile(path.join(app, "app", "broken.tsx"), 'export const x = require("./gone.png");\n');
    try {
      const missing = await exportApp("--output-dir", "dist");
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('Unable to resolve asset "app/gone.png" referenced from app/broken.tsx');
    } finally {
      await fs.rm(path.join(app, "app", "broken.tsx"));
    }
    const android = await exportApp("--platform", "android");
    expect(android.code).toBe(1);
    expect(android.stderr).toContain("only builds the ios platform");
  });
});
