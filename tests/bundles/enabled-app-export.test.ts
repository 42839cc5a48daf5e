import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProjectBundle } from "@/lib/bundles/project-build";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { writeBackendUrlToEnvFile } from "@/lib/cloud/env-file";
import { getProject } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { fetchBlobUrl } from "./build-fixture";
import { openProjectSandbox } from "@/lib/workspace";

const HERMES_MAGIC = [0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f];
let fx: CloudFixture;

beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

describe("the real expo export of an enabled app", () => {
  it("succeeds, and Expo inlined the deployment URL into the Hermes bundle", async () => {
    const created = await fx.newProject();
    const { deploymentUrl } = await enableCloudBackend(created, openProjectSandbox);
    const project = (await getProject(fx.db, created.id))!;

    const result = await buildProjectBundle(project, await openProjectSandbox(project));
    if (!result.success) throw new Error(result.error);
    const bundle = await fetchBlobUrl(result.bundleUrl);
    expect([...bundle.bytes.subarray(0, 8)]).toEqual(HERMES_MAGIC);
    expect(Buffer.from(bundle.bytes).includes(deploymentUrl)).toBe(true);
    // The convex client was bundled (it came from the dependency enable added).
    expect(Buffer.from(bundle.bytes).includes("ConvexReactClient")).toBe(true);

    // A new deployment URL (a reconnect) reaches the next export: Metro's cache must not keep the old one.
    const movedUrl = "https://moved-otter-456.convex.cloud";
    await writeBackendUrlToEnvFile(await fx.sandboxOf(project), movedUrl);
    const rebuilt = await buildProjectBundle(project, await openProjectSandbox(project));
    if (!rebuilt.success) throw new Error(rebuilt.error);
    const moved = Buffer.from((await fetchBlobUrl(rebuilt.bundleUrl)).bytes);
    expect(moved.includes(movedUrl)).toBe(true);
    expect(moved.includes(deploymentUrl)).toBe(false);
    // An enable and two cold exports with the real toolchain: minutes on a loaded 2-core machine.
  }, 480_000);
});
