import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBlobStore } from "@/lib/blob";
import { buildStaticBundle } from "@/lib/bundles/build";
import { APP_DIR } from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { fakeE2BLib, FakeSdkSandbox } from "../sandbox/fake-e2b";
import { fetchBlobUrl } from "./build-fixture";
import { exportFixtureApp, filesUnder } from "./real-export";

const provider = createE2BSandboxProvider({ apiKey: "e2b_test_key_0123456789", lib: fakeE2BLib });
const EXPO_EXPORT = "npx expo export --platform ios --output-dir dist --dump-assetmap";
let app: string;
let exported: Map<string, Uint8Array>;

const SHA = "feedc0de".padEnd(40, "0");
const CHECKOUT = `/home/user/.exports/${SHA}`;

beforeAll(async () => {
  // The fixture app exported by the real Expo CLI here stands for what it writes in an E2B sandbox.
  app = await exportFixtureApp();
  exported = await filesUnder(path.join(app, "dist"));
});

afterAll(async () => {
  FakeSdkSandbox.reset();
  await fs.rm(app, { recursive: true, force: true });
});

describe("buildStaticBundle on the E2B driver (fake SDK)", () => {
  it("runs Expo's export of the requested platform and reads every output through the SDK as bytes", async () => {
    const sandbox = await provider.create();
    const sdkSandbox = FakeSdkSandbox.instances.get(sandbox.sandboxId)!;
    for (const file of ["app.json", "package.json"]) sdkSandbox.files.content.set(`${APP_DIR}/${file}`, await fs.readFile(path.join(app, file)));
    FakeSdkSandbox.script = (cmd, opts) => {
      if (cmd.startsWith("git rev-parse --verify")) return { exitCode: 0, stdout: [`${SHA}\n`] };
      if (cmd.includes("git worktree add")) {
        for (const file of ["app.json", "package.json"]) sdkSandbox.files.content.set(`${CHECKOUT}/${file}`, sdkSandbox.files.content.get(`${APP_DIR}/${file}`)!);
      }
      if (cmd.endsWith(`&& ${EXPO_EXPORT}`) && opts.cwd === CHECKOUT) for (const [file, bytes] of exported) sdkSandbox.files.content.set(`${CHECKOUT}/dist/${file}`, bytes);
      return { exitCode: 0 };
    };

    const input = { sandboxId: sandbox.sandboxId, projectId: "e2b-project", commitSha: SHA, commitMessage: "", platforms: ["ios" as const] };
    const result = await buildStaticBundle(input, { provider });
    expect(result.success).toBe(true);
    // Expo's export runs in a checkout of the commit, never in the live app directory.
    expect(sdkSandbox.commandLog.filter((entry) => entry.cmd.endsWith(EXPO_EXPORT)).map((entry) => entry.opts.cwd)).toEqual([CHECKOUT]);
    expect(sdkSandbox.commandLog.at(-1)?.cmd).toContain(`git worktree remove --force ${CHECKOUT}`);
    const outputReads = sdkSandbox.files.readFormats.slice(-exported.size);
    expect(outputReads).toEqual(Array(exported.size).fill("bytes"));

    const metadata = JSON.parse(new TextDecoder().decode(exported.get("metadata.json")));
    const stored = await fetchBlobUrl(result.success ? result.bundleUrl : "");
    expect(Buffer.from(stored.bytes).equals(Buffer.from(exported.get(metadata.fileMetadata.ios.bundle)!))).toBe(true);
    const listed = await getBlobStore().list({ prefix: `bundles/e2b-project/${SHA}/assets/` });
    expect(listed.blobs).toHaveLength(new Set(metadata.fileMetadata.ios.assets.map((asset: { path: string }) => asset.path)).size);
  });
});
