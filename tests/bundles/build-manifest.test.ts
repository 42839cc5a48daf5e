import { describe, expect, it } from "vitest";
import { resolveRuntimeVersion } from "@/lib/bundles/app-config";
import { BundleBuildError } from "@/lib/bundles/errors";
import { contentUuid, createUpdateManifest } from "@/lib/bundles/manifest";
import { mapWithConcurrency } from "@/lib/bundles/pool";
import { binaryBytes, md5, sha256Base64Url } from "./build-fixture";
import { expectExpoUpdatesV1Manifest } from "./expo-manifest";

describe("resolveRuntimeVersion", () => {
  it("takes a string, preferring the iOS-specific one", () => {
    expect(resolveRuntimeVersion({ runtimeVersion: "2.1.0" })).toBe("2.1.0");
    expect(resolveRuntimeVersion({ runtimeVersion: "2.1.0", ios: { runtimeVersion: "ios-7" } })).toBe("ios-7");
    expect(resolveRuntimeVersion({ runtimeVersion: "2.1.0", ios: { runtimeVersion: "ios-7" } }, undefined, "android")).toBe("2.1.0");
    expect(resolveRuntimeVersion({ runtimeVersion: "2.1.0", android: { runtimeVersion: "android-3" } }, undefined, "android")).toBe("android-3");
  });

  it("resolves the policies the way Expo does", () => {
    expect(resolveRuntimeVersion({ version: "3.4.5", runtimeVersion: { policy: "appVersion" } })).toBe("3.4.5");
    expect(resolveRuntimeVersion({ version: "3.4.5", runtimeVersion: { policy: "nativeVersion" }, ios: { buildNumber: "12" } })).toBe("3.4.5(12)");
    // Android's native version is its versionCode.
    expect(resolveRuntimeVersion({ version: "3.4.5", runtimeVersion: { policy: "nativeVersion" }, android: { versionCode: 7 } }, undefined, "android")).toBe("3.4.5(7)");
    expect(resolveRuntimeVersion({ runtimeVersion: { policy: "sdkVersion" } }, "~54.0.0")).toBe("exposdk:54.0.0");
    expect(resolveRuntimeVersion({ sdkVersion: "53.0.0", runtimeVersion: { policy: "sdkVersion" } }, "~54.0.0")).toBe("exposdk:53.0.0");
  });

  it("falls back to the sdkVersion policy when the config has no runtimeVersion", () => {
    expect(resolveRuntimeVersion({ version: "1.0.0" }, "^54.0.3")).toBe("exposdk:54.0.0");
  });

  it("refuses what it cannot resolve with a config error", () => {
    for (const [config, dependency] of [
      [{ runtimeVersion: { policy: "fingerprint" as const } }, "~54.0.0"],
      [{ runtimeVersion: { policy: "appVersion" as const } }, undefined],
      [{}, undefined],
    ] as const) {
      const error = (() => {
        try {
          return resolveRuntimeVersion(config, dependency);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(BundleBuildError);
      expect(error).toMatchObject({ stage: "config", code: "bundle_config_failed" });
    }
  });
});

describe("createUpdateManifest", () => {
  const bundle = binaryBytes(2048, 9);
  const icon = binaryBytes(512, 10);
  const input = {
    projectId: "p1",
    platform: "ios",
    commitSha: "0123456789abcdef0123456789abcdef01234567",
    commitMessage: "Make the button blue",
    runtimeVersion: "1.0.0",
    createdAt: new Date("2026-01-02T03:04:05.000Z"),
    launchAsset: { bytes: bundle, url: "https://blob.example/bundles/p1/c/ios/index.js" },
    assets: [{ key: md5(icon), type: "png", contentType: "image/png", bytes: icon, url: `https://blob.example/bundles/p1/c/assets/${md5(icon)}` }],
  };

  it("follows the protocol's rules", () => {
    const manifest = expectExpoUpdatesV1Manifest(createUpdateManifest(input));
    expect(manifest.launchAsset).toEqual({ hash: sha256Base64Url(bundle), key: md5(bundle), contentType: "application/javascript", url: input.launchAsset.url });
    expect(manifest.assets).toEqual([{ hash: sha256Base64Url(icon), key: md5(icon), contentType: "image/png", fileExtension: ".png", url: input.assets[0].url }]);
    expect(manifest.metadata).toEqual({ platform: "ios", commitSha: input.commitSha, commitMessage: "Make the button blue" });
    expect(manifest.createdAt).toBe("2026-01-02T03:04:05.000Z");
    expect(manifest.extra).toEqual({});
  });

  it("derives the id from project, platform, commit and content", () => {
    const id = createUpdateManifest(input).id;
    expect(createUpdateManifest({ ...input, createdAt: new Date() }).id).toBe(id);
    expect(createUpdateManifest({ ...input, projectId: "p2" }).id).not.toBe(id);
    expect(createUpdateManifest({ ...input, platform: "android" }).id).not.toBe(id);
    expect(createUpdateManifest({ ...input, launchAsset: { ...input.launchAsset, bytes: binaryBytes(2048, 11) } }).id).not.toBe(id);
    expect(contentUuid(["a"])).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("mapWithConcurrency", () => {
  it("keeps order, bounds the tasks in flight and stops after a failure", async () => {
    let inFlight = 0;
    let peak = 0;
    const started: number[] = [];
    const task = async (n: number) => {
      started.push(n);
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await Promise.resolve();
      inFlight -= 1;
      if (n === 4) throw new Error("four");
      return n * 10;
    };
    expect(await mapWithConcurrency([1, 2, 3], 2, task)).toEqual([10, 20, 30]);
    expect(peak).toBe(2);
    started.length = 0;
    await expect(mapWithConcurrency([1, 4, 5, 6, 7, 8], 1, task)).rejects.toThrow("four");
    expect(started).toEqual([1, 4]);
  });
});
