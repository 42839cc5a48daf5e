import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBlobStore } from "@/lib/blob";
import { buildStaticBundle } from "@/lib/bundles/build";
import { APP_DIR } from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { fakeE2BLib, FakeSdkSandbox } from "../sandbox/fake-e2b";
import { createHostApp, fetchBlobUrl, runExportScript } from "./build-fixture";

const provider = createE2BSandboxProvider({ apiKey: "e2b_test_key_0123456789", lib: fakeE2BLib });
const EXPO_EXPORT = "npx expo export --platform ios --output-dir dist --dump-assetmap";
let app: string;
let exported: Map<string, Uint8Array>;

/** Every file under `dir`, by path relative to it. */
async function filesUnder(dir: string): Promise<Map<string, Uint8Array>> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
  return new Map(await Promise.all(files.map(async (file) => [file, new Uint8Array(await fs.readFile(path.join(dir, file)))] as const)));
}

beforeAll(async () => {
  // A real export of the fixture app stands for what Expo writes in an E2B sandbox.
  app = await createHostApp();
  expect((await runExportScript(app, "--output-dir", "dist", "--dump-assetmap")).code).toBe(0);
  exported = await filesUnder(path.join(app, "dist"));
});

afterAll(async () => {
  FakeSdkSandbox.reset();
  await fs.rm(app, { recursive: true, force: true });
});

describe("buildStaticBundle on the E2B driver (fake SDK)", () => {
  it("runs Expo's export by default and reads every output through the SDK as bytes", async () => {
    const sandbox = await provider.create();
    const sdkSandbox = FakeSdkSandbox.instances.get(sandbox.sandboxId)!;
    for (const file of ["app.json", "package.json"]) sdkSandbox.files.content.set(`${APP_DIR}/${file}`, await fs.readFile(path.join(app, file)));
    FakeSdkSandbox.script = (cmd) => {
      if (cmd === EXPO_EXPORT) for (const [file, bytes] of exported) sdkSandbox.files.content.set(`${APP_DIR}/dist/${file}`, bytes);
      return { exitCode: 0 };
    };

    const result = await buildStaticBundle({ sandboxId: sandbox.sandboxId, projectId: "e2b-project", commitSha: "feedc0de", commitMessage: "" }, { provider });
    expect(result.success).toBe(true);
    expect(sdkSandbox.commandLog.map((entry) => [entry.cmd, entry.opts.cwd])).toEqual([[EXPO_EXPORT, APP_DIR]]);
    const outputReads = sdkSandbox.files.readFormats.slice(-exported.size);
    expect(outputReads).toEqual(Array(exported.size).fill("bytes"));

    const metadata = JSON.parse(new TextDecoder().decode(exported.get("metadata.json")));
    const stored = await fetchBlobUrl(result.success ? result.bundleUrl : "");
    expect(Buffer.from(stored.bytes).equals(Buffer.from(exported.get(metadata.fileMetadata.ios.bundle)!))).toBe(true);
    const listed = await getBlobStore().list({ prefix: "bundles/e2b-project/feedc0de/assets/" });
    expect(listed.blobs).toHaveLength(metadata.fileMetadata.ios.assets.length);
  });
});
