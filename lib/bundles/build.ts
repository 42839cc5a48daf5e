import { type BlobStore, getBlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { BadRequestError, isAppError } from "@/lib/errors";
import { log, redactSecrets } from "@/lib/log";
import { getSandboxProvider, type Sandbox, type SandboxProvider } from "@/lib/sandbox";
import { processSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import type { BundleUpdate } from "@/lib/store/updates";
import { publishBundles } from "@/lib/updates/releases";
import { PLATFORMS, type Platform } from "@/lib/updates/streams";
import { type AppConfig, readAppConfig, resolveRuntimeVersion } from "./app-config";
import { parseCommitSha } from "./commit";
import { BundleBuildError } from "./errors";
import { DEFAULT_PLATFORMS, exportCommandFor, type ExportOutput, readExportOutput, runExportCommand, withCommitCheckout } from "./export";
import { createUpdateManifest } from "./manifest";
import { bundlePrefix } from "./paths";
import { mapWithConcurrency } from "./pool";

/** Spec 4.4 input. */
export interface BuildStaticBundleInput {
  sandboxId: string;
  projectId: string;
  /** Names the upload folder `bundles/<project_id>/<commit_id>/`; 7–64 hex digits. */
  commitSha: string;
  commitMessage: string;
  /** The platforms to export and publish. @defaultValue DEFAULT_PLATFORMS (iOS and Android) */
  platforms?: Platform[];
  /** The channel the build is released to. @defaultValue main */
  channel?: string;
  /** The share of devices the release goes to. @defaultValue 100 */
  rolloutPercent?: number;
}

/** Where one platform's bundle was uploaded. */
export interface PlatformBundleUrls {
  manifestUrl: string;
  bundleUrl: string;
}

/**
 * Spec 4.4 output (`manifestUrl`, `bundleUrl`: the iOS bundle's, else the first platform's) with
 * each platform's; a failure carries a user-facing (redacted) message and a stable code.
 */
export type BuildStaticBundleResult =
  | ({ success: true; platforms: Partial<Record<Platform, PlatformBundleUrls>> } & PlatformBundleUrls)
  | { success: false; error: string; code: string; /** The HTTP status the failure maps to. */ status: number };

export interface BuildStaticBundleOptions {
  /** @defaultValue getBlobStore() */
  blob?: BlobStore;
  /** Used by {@link buildStaticBundle} to reach the sandbox. @defaultValue getSandboxProvider() */
  provider?: SandboxProvider;
  /** Shell command writing the export to `dist/` of the commit's checkout. @defaultValue BUNDLE_EXPORT_COMMAND, else `npx expo export` of the requested platforms */
  exportCommand?: string;
  /** @defaultValue 600_000 (Metro's first build of a large app takes minutes) */
  exportTimeoutMs?: number;
  /** Sandbox reads and blob uploads in flight at once. @defaultValue 8 */
  concurrency?: number;
  /** Clock for the manifest's `createdAt`. */
  now?: () => Date;
}

const DEFAULT_EXPORT_TIMEOUT_MS = 600_000;
const DEFAULT_CONCURRENCY = 8;
// Becomes a blob path segment (projects are UUIDs).
const PROJECT_ID = /^[\w-]{1,128}$/;
// Files at fixed paths that a rebuild of the same commit replaces; assets are content-addressed
// (named by hash) and keep the store's long default.
const REPLACEABLE_MAX_AGE_SECONDS = 60;

// One build per sandbox at a time: two exports writing the same dist/ would mix their files.
function serialized<T>(sandboxId: string, build: () => Promise<T>): Promise<T> {
  const builds = processSingleton("bundleBuilds", () => new Map<string, Promise<unknown>>());
  const run = (builds.get(sandboxId) ?? Promise.resolve()).catch(() => undefined).then(build);
  const settled = run.catch(() => undefined);
  builds.set(sandboxId, settled);
  void settled.then(() => builds.get(sandboxId) === settled && builds.delete(sandboxId));
  return run;
}

const putFile = (blob: BlobStore, pathname: string, body: Uint8Array | string, contentType: string, cacheControlMaxAge?: number) =>
  blob.put(pathname, body, { access: "public", allowOverwrite: true, contentType, cacheControlMaxAge });

type PublishInput = Omit<BuildStaticBundleInput, "sandboxId" | "platforms"> & { platforms: Platform[] };

/**
 * Uploads the export: the platforms' bundles and the assets in parallel (bounded), then the asset
 * map, then each platform's manifest, last, so a manifest is never visible before every file it
 * points to. Answers each platform's bundle record.
 */
async function uploadExport(
  blob: BlobStore,
  input: PublishInput,
  build: { output: ExportOutput; appConfig: AppConfig; createdAt: Date; concurrency: number },
): Promise<{ bundle: BundleUpdate; urls: PlatformBundleUrls }[]> {
  const { output, appConfig } = build;
  const prefix = bundlePrefix(input.projectId, input.commitSha);
  const files = [
    ...input.platforms.map((platform) => ({ name: `${platform}/index.js`, bytes: output.platforms[platform]!.bundle, contentType: "application/javascript", maxAge: REPLACEABLE_MAX_AGE_SECONDS })),
    ...output.assets.map((asset) => ({ name: `assets/${asset.key}`, bytes: asset.bytes, contentType: asset.contentType, maxAge: undefined })),
  ];
  const uploaded = await mapWithConcurrency(files, build.concurrency, (file) =>
    putFile(blob, prefix + file.name, file.bytes, file.contentType, file.maxAge),
  );
  const assetUrls = new Map(output.assets.map((asset, index) => [asset.key, uploaded[input.platforms.length + index].url]));
  if (output.assetMap) {
    await putFile(blob, `${prefix}assetmap.json`, JSON.stringify(output.assetMap), "application/json", REPLACEABLE_MAX_AGE_SECONDS);
  }
  return Promise.all(
    input.platforms.map(async (platform, index) => {
      const exported = output.platforms[platform]!;
      const used = new Set(exported.assetKeys);
      const assets = output.assets.filter((asset) => used.has(asset.key));
      const manifest = createUpdateManifest({
        ...input,
        platform,
        runtimeVersion: resolveRuntimeVersion(appConfig.expo, appConfig.expoDependency, platform),
        createdAt: build.createdAt,
        launchAsset: { bytes: exported.bundle, url: uploaded[index].url },
        assets: assets.map((asset) => ({ ...asset, url: assetUrls.get(asset.key)! })),
        expoConfig: appConfig.expo,
      });
      const manifestText = JSON.stringify(manifest);
      const stored = await putFile(blob, `${prefix}${platform}/manifest.json`, manifestText, "application/json", REPLACEABLE_MAX_AGE_SECONDS);
      const bundle: BundleUpdate = {
        projectId: input.projectId,
        platform,
        commitSha: input.commitSha,
        commitMessage: input.commitMessage,
        runtimeVersion: manifest.runtimeVersion,
        updateId: manifest.id,
        manifest: manifestText,
        size: assets.reduce((total, asset) => total + asset.bytes.byteLength, exported.bundle.byteLength),
        createdAt: build.createdAt,
      };
      return { bundle, urls: { manifestUrl: stored.url, bundleUrl: uploaded[index].url } };
    }),
  );
}

async function exportAndUpload(sandbox: Sandbox, input: PublishInput, options: BuildStaticBundleOptions) {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const command = options.exportCommand ?? getConfig().BUNDLE_EXPORT_COMMAND ?? exportCommandFor(input.platforms);
  const { appConfig, output } = await withCommitCheckout(sandbox, input.commitSha, async (dir) => {
    const appConfig = await readAppConfig(sandbox, dir);
    await runExportCommand(sandbox, command, options.exportTimeoutMs ?? DEFAULT_EXPORT_TIMEOUT_MS, dir);
    return { appConfig, output: await readExportOutput(sandbox, concurrency, dir) };
  });
  const missing = input.platforms.filter((platform) => !output.platforms[platform]);
  if (missing.length > 0) throw new BundleBuildError("output", `The export wrote no ${missing.join(" or ")} bundle (dist/metadata.json).`);
  const createdAt = (options.now ?? (() => new Date()))();
  const published = await uploadExport(options.blob ?? getBlobStore(), input, { output, appConfig, createdAt, concurrency }).catch((error: unknown) => {
    if (isAppError(error)) throw error;
    throw new BundleBuildError("upload", `Uploading the bundle failed: ${(error as Error).message}`, { cause: error });
  });
  await publishBundles(
    await getStore(),
    published.map((entry) => entry.bundle),
    { channel: input.channel, rolloutPercent: input.rolloutPercent },
  ).catch((error: unknown) => {
    if (isAppError(error)) throw error;
    throw new BundleBuildError("publish", `Publishing the bundle failed: ${(error as Error).message}`, { cause: error });
  });
  log.info("static bundle uploaded and published", {
    projectId: input.projectId,
    commitSha: input.commitSha,
    platforms: input.platforms,
    assets: output.assets.length,
  });
  const platforms = Object.fromEntries(published.map((entry) => [entry.bundle.platform, entry.urls]));
  return { ...(platforms.ios ?? published[0].urls), platforms };
}

function failure(error: unknown, context: Record<string, unknown>): BuildStaticBundleResult {
  const known = isAppError(error);
  const message = redactSecrets(known ? error.message : `The bundle build failed: ${(error as Error)?.message ?? String(error)}`);
  log.warn("static bundle build failed", { ...context, error: message });
  return { success: false, error: message, code: known ? error.code : "bundle_build_failed", status: known ? error.status : 502 };
}

/**
 * Exports the app for each platform (one `expo export`) in an already connected sandbox and
 * uploads it under `bundles/<project_id>/<commit_id>/` (spec 2.9, `android/` beside `ios/`):
 * `<platform>/index.js`, `assets/<file>`, `assetmap.json`, then `<platform>/manifest.json`
 * (Expo Updates v1); then publishes it after its delivery check: the project's update URL serves
 * it on the channel to apps of its runtime version (lib/updates). Never throws.
 */
export async function buildBundleInSandbox(
  sandbox: Sandbox,
  input: Omit<BuildStaticBundleInput, "sandboxId">,
  options: BuildStaticBundleOptions = {},
): Promise<BuildStaticBundleResult> {
  const context = { projectId: input.projectId, commitSha: input.commitSha, sandboxId: sandbox.sandboxId };
  try {
    if (!PROJECT_ID.test(input.projectId)) throw new BadRequestError("projectId must be letters, digits, - or _.", "invalid_project_id");
    const commitSha = parseCommitSha(input.commitSha);
    const platforms = PLATFORMS.filter((platform) => (input.platforms ?? DEFAULT_PLATFORMS).includes(platform));
    const urls = await serialized(sandbox.sandboxId, () => exportAndUpload(sandbox, { ...input, commitSha, platforms }, options));
    return { success: true, ...urls };
  } catch (error) {
    return failure(error, context);
  }
}

/** Spec 4.4: connects to the sandbox, then {@link buildBundleInSandbox}. Never throws. */
export async function buildStaticBundle(input: BuildStaticBundleInput, options: BuildStaticBundleOptions = {}): Promise<BuildStaticBundleResult> {
  let sandbox: Sandbox;
  try {
    sandbox = await (options.provider ?? getSandboxProvider()).connect(input.sandboxId);
  } catch (error) {
    return failure(error, { projectId: input.projectId, sandboxId: input.sandboxId });
  }
  return buildBundleInSandbox(sandbox, input, options);
}
