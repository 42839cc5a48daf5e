import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProjectBundle } from "@/lib/bundles/project-build";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { writeBackendUrlToEnvFile } from "@/lib/cloud/env-file";
import { getProject } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { fetchBlobUrl } from "./build-fixture";
import { APP_DIR } from "@/lib/sandbox";
import { openProjectSandbox } from "@/lib/workspace";

const IOS_ONLY = { platforms: ["ios" as const] };
const HERMES_MAGIC = [0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f];
const GREETING = "Hello from a module only the app's Metro config resolves";
const APP_METRO_CONFIG = `const path = require("path");
const { getDefaultConfig } = require("expo/metro-config");
const config = getDefaultConfig(__dirname);
config.resolver.extraNodeModules = { "app-greeting": path.join(__dirname, "greeting") };
module.exports = config;
`;
const GREETING_SCREEN = `import { Text } from "react-native";
import { greeting } from "app-greeting";

export default function Greeting() {
  return <Text>{greeting}</Text>;
}
`;
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

    // iOS alone: what is proven here does not depend on the platform, and an export is minutes of CPU.
    const result = await buildProjectBundle(project, await openProjectSandbox(project), IOS_ONLY);
    if (!result.success) throw new Error(result.error);
    const bundle = await fetchBlobUrl(result.bundleUrl);
    expect([...bundle.bytes.subarray(0, 8)]).toEqual(HERMES_MAGIC);
    expect(Buffer.from(bundle.bytes).includes(deploymentUrl)).toBe(true);
    // The convex client was bundled (it came from the dependency enable added).
    expect(Buffer.from(bundle.bytes).includes("ConvexReactClient")).toBe(true);

    // A new deployment URL (a reconnect) reaches the next export: Metro's cache must not keep the old one.
    const movedUrl = "https://moved-otter-456.convex.cloud";
    const sandbox = await fx.sandboxOf(project);
    await writeBackendUrlToEnvFile(sandbox, movedUrl);
    // The export's shared-cache config loads the app's own metro.config.js: here it resolves an
    // import that only it knows, so without it the export fails.
    await sandbox.files.write([
      { path: `${APP_DIR}/metro.config.js`, data: APP_METRO_CONFIG },
      { path: `${APP_DIR}/greeting/index.js`, data: `export const greeting = "${GREETING}";\n` },
      { path: `${APP_DIR}/app/greeting.tsx`, data: GREETING_SCREEN },
    ]);
    await sandbox.commands.run('git add -A && git commit -q -m "A metro.config.js of its own"', { cwd: APP_DIR });
    const rebuilt = await buildProjectBundle(project, await openProjectSandbox(project), IOS_ONLY);
    if (!rebuilt.success) throw new Error(rebuilt.error);
    const moved = Buffer.from((await fetchBlobUrl(rebuilt.bundleUrl)).bytes);
    expect(moved.includes(movedUrl)).toBe(true);
    expect(moved.includes(deploymentUrl)).toBe(false);
    expect(moved.includes(GREETING)).toBe(true);
    // An enable and two cold exports with the real toolchain: minutes on a loaded 2-core machine.
  }, 480_000);
});
