import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { buildStaticBundle } from "@/lib/bundles/build";
import { APP_DIR, type Sandbox, type SandboxProvider } from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { getAppToolchain } from "@/lib/toolchain";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";
import { addBinaryAssets, FIXTURE_ASSETS, fetchBlobUrl, md5 } from "./build-fixture";

// A bundle built on the E2B driver: the real `e2b` SDK against the local sandbox service, whose
// sandbox holds the app with the prepared toolchain (as an E2B template would), and Expo's own
// export run in it. Everything the build reads comes through the SDK.

/** A loaded 2-core machine: a walled sandbox, then Metro and Hermes over the whole app. */
const SLOW_MS = 600_000;
const HERMES_MAGIC = [0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f];
const projectId = "e2b-project";

let service: SandboxServiceProcess;
let provider: SandboxProvider;
let sandbox: Sandbox;

beforeAll(async () => {
  service = await startSandboxService(path.join(process.env.DATA_DIR!, "sandbox-service"), { toolchainDir: process.env.APP_TOOLCHAIN_DIR });
  provider = createE2BSandboxProvider({ apiKey: service.apiKey, apiUrl: service.url, sandboxUrl: service.url, toolchain: getAppToolchain() });
  sandbox = await provider.create({ template: "app" });
}, SLOW_MS);

afterAll(async () => {
  if (sandbox) await provider.kill(sandbox.sandboxId).catch(() => false);
  await service?.stop();
});

describe("buildStaticBundle on the E2B driver (real SDK on the local sandbox service)", () => {
  it("runs Expo's export of the requested platform in a checkout of the commit, and stores its binary output byte for byte", { timeout: SLOW_MS }, async () => {
    const commitSha = await addBinaryAssets(sandbox);
    // iOS only: tests/bundles/build.test.ts proves both platforms; one platform keeps this export's CPU down.
    const input = { sandboxId: sandbox.sandboxId, projectId, commitSha, commitMessage: "Add brand assets", platforms: ["ios" as const] };
    const result = await buildStaticBundle(input, { provider });
    if (!result.success) expect.fail(`the build failed: ${result.error}`);

    // The export ran in a checkout, which is gone; the live app directory is untouched.
    const git = async (command: string) => (await sandbox.commands.run(command, { cwd: APP_DIR })).stdout.trim();
    expect(await git("git status --porcelain")).toBe("");
    expect(await git("git worktree list --porcelain")).not.toContain(".exports");
    expect(await sandbox.files.exists(`${APP_DIR}/dist`)).toBe(false);

    // Hermes bytecode and the app's binary assets, read through the SDK as bytes: a text read
    // anywhere would have replaced their invalid UTF-8.
    const bundle = await fetchBlobUrl(result.bundleUrl);
    expect([...bundle.bytes.subarray(0, HERMES_MAGIC.length)]).toEqual(HERMES_MAGIC);
    const assets = await listAllBlobs(getBlobStore(), `bundles/${projectId}/${commitSha}/assets/`);
    const storedHashes = await Promise.all(assets.map(async (asset) => md5((await fetchBlobUrl(asset.url)).bytes)));
    for (const [file, bytes] of Object.entries(FIXTURE_ASSETS)) {
      if (!file.includes("@")) expect(storedHashes, file).toContain(md5(bytes));
    }
  });
});
