/**
 * The real app toolchain, end to end:
 *  - cold install of the template's toolchain into an empty directory (empty npm cache too);
 *  - new project → preview answering, with the warm machine-wide toolchain (runs × N);
 *  - first Metro web bundle of a new project;
 *  - `expo export --platform ios` of the starter (through the bundle build);
 *  - enable → the app dev server serving a bundle that holds the new deployment URL.
 * Run: npx tsx bench/toolchain.ts [runs=3] [--skip-cold]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-toolchain-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";
process.env.SEED_DEMO = "false";

const { startEmulatorServer } = await import("@/lib/emulator/server");
const { getConfig, reloadConfig } = await import("@/lib/config");
const { enableCloudBackend } = await import("@/lib/cloud/enable");
const { createProject } = await import("@/lib/projects");
const { getSandboxProvider } = await import("@/lib/sandbox");
const { buildProjectBundle } = await import("@/lib/bundles/project-build");
const { openProjectSandbox } = await import("@/lib/workspace");
const { closeStore, getStore } = await import("@/lib/store");
const { insertUser } = await import("@/lib/store/users");
const { APP_TEMPLATE_ROOT, AppToolchain } = await import("@/lib/toolchain");

const runs = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 3);
const skipCold = process.argv.includes("--skip-cold");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The entry bundle URL of an Expo web page, from its HTML. */
async function entryBundleUrl(previewUrl: string): Promise<URL> {
  const page = await (await fetch(previewUrl)).text();
  const src = /<script src="([^"]+)"/.exec(page)?.[1];
  if (!src) throw new Error("the preview page names no script");
  return new URL(src.replaceAll("&amp;", "&"), previewUrl);
}

const server = await startEmulatorServer({ projectQuota: runs * 4 + 4 });
process.env.PROVISION_HOST = server.baseUrl;
reloadConfig();
const db = await getStore();
const user = await insertUser(db, { name: "bench" });
const sandboxes: string[] = [];

try {
  if (!skipCold) {
    const coldDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-toolchain-cold-"));
    const started = performance.now();
    await new AppToolchain({ dir: coldDir, onProgress: () => undefined }).prepare(APP_TEMPLATE_ROOT);
    console.log(`cold toolchain install (empty npm cache): ${seconds(performance.now() - started)}`);
    fs.rmSync(coldDir, { recursive: true, force: true });
  }
  await new AppToolchain({ dir: getConfig().APP_TOOLCHAIN_DIR }).prepare(APP_TEMPLATE_ROOT);

  const previews: number[] = [];
  const firstBundles: number[] = [];
  let starter: Awaited<ReturnType<typeof createProject>> | undefined;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const project = await createProject(db, user.id, `bench-${run}`);
    previews.push(performance.now() - started);
    sandboxes.push(project.sandboxId!);
    const bundleStarted = performance.now();
    const bundle = await fetch(await entryBundleUrl(project.previewUrl!));
    await bundle.arrayBuffer();
    firstBundles.push(performance.now() - bundleStarted);
    starter ??= project;
  }
  console.log(`new project → preview answering (warm toolchain): p50 ${seconds(median(previews))} [${previews.map(seconds).join(", ")}] (goal ≤ 15 s)`);
  console.log(`first Metro web bundle after that: p50 ${seconds(median(firstBundles))} [${firstBundles.map(seconds).join(", ")}]`);

  const exportStarted = performance.now();
  const built = await buildProjectBundle(starter!, await openProjectSandbox(starter!));
  if (!built.success) throw new Error(built.error);
  console.log(`expo export --platform ios of the starter, uploaded: ${seconds(performance.now() - exportStarted)}`);

  const enableStarted = performance.now();
  const { deploymentUrl } = await enableCloudBackend(starter!, openProjectSandbox);
  const enabled = performance.now() - enableStarted;
  const project = (await (await import("@/lib/store/projects")).getProject(db, starter!.id))!;
  const bundle = await (await fetch(await entryBundleUrl(project.previewUrl!))).text();
  if (!bundle.includes(deploymentUrl)) throw new Error("the app dev server does not serve the deployment URL");
  console.log(`enable → app dev server serving the new URL: ${seconds(performance.now() - enableStarted)} (enable call ${seconds(enabled)})`);
} finally {
  for (const sandboxId of sandboxes) await getSandboxProvider().kill(sandboxId);
  await server.close();
  await closeStore();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
