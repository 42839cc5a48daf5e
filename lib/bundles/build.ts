import { type BlobStore, getBlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { BadRequestError, isAppError } from "@/lib/errors";
import { log, redactSecrets } from "@/lib/log";
import { getSandboxProvider, type Sandbox, type SandboxProvider } from "@/lib/sandbox";
import { processSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { BUNDLE_PLATFORM, publishBundle } from "@/lib/updates/releases";
import { type AppConfig, readAppConfig } from "./app-config";
import { parseCommitSha } from "./commit";
import { BundleBuildError } from "./errors";
import { DEFAULT_EXPORT_COMMAND, type ExportOutput, readExportOutput, runExportCommand, withCommitCheckout } from "./export";
import { createUpdateManifest, type UpdateManifest } from "./manifest";
import { bundlePrefix } from "./paths";
import { mapWithConcurrency } from "./pool";

/** Spec 4.4 input. */
export interface BuildStaticBundleInput {
  sandboxId: string;
  projectId: string;
  /** Names the upload folder `bundles/<project_id>/<commit_id>/`; 7–64 hex digits. */
  commitSha: string;
  commitMessage: string;
}

/** Spec 4.4 output; a failure carries a user-facing (redacted) message and a stable code. */
export type BuildStaticBundleResult =
  | { success: true; manifestUrl: string; bundleUrl: string }
  | { success: false; error: string; code: string; /** The HTTP status the failure maps to. */ status: number };

export interface BuildStaticBundleOptions {
  /** @defaultValue getBlobStore() */
  blob?: BlobStore;
  /** Used by {@link buildStaticBundle} to reach the sandbox. @defaultValue getSandboxProvider() */
  provider?: SandboxProvider;
  /** Shell command writing the export to `dist/` of the commit's checkout. @defaultValue BUNDLE_EXPORT_COMMAND, else `npx expo export …` */
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

/**
 * Uploads the export: bundle and assets in parallel (bounded), then the asset map, then the
 * manifest, last, so a manifest is never visible before every file it points to.
 */
async function publishExport(
  blob: BlobStore,
  input: Omit<BuildStaticBundleInput, "sandboxId">,
  build: { output: ExportOutput; appConfig: AppConfig; createdAt: Date; concurrency: number },
): Promise<{ manifestUrl: string; bundleUrl: string; manifest: UpdateManifest; manifestText: string }> {
  const { output, appConfig } = build;
  const prefix = bundlePrefix(input.projectId, input.commitSha);
  const files = [
    { name: "ios/index.js", bytes: output.bundle, contentType: "application/javascript", maxAge: REPLACEABLE_MAX_AGE_SECONDS },
    ...output.assets.map((asset) => ({ name: `assets/${asset.key}`, bytes: asset.bytes, contentType: asset.contentType, maxAge: undefined })),
  ];
  const uploaded = await mapWithConcurrency(files, build.concurrency, (file) =>
    putFile(blob, prefix + file.name, file.bytes, file.contentType, file.maxAge),
  );
  if (output.assetMap) {
    await putFile(blob, `${prefix}assetmap.json`, JSON.stringify(output.assetMap), "application/json", REPLACEABLE_MAX_AGE_SECONDS);
  }
  const manifest = createUpdateManifest({
    ...input,
    runtimeVersion: appConfig.runtimeVersion,
    createdAt: build.createdAt,
    launchAsset: { bytes: output.bundle, url: uploaded[0].url },
    assets: output.assets.map((asset, index) => ({ ...asset, url: uploaded[index + 1].url })),
    expoConfig: appConfig.expo,
  });
  const manifestText = JSON.stringify(manifest);
  const stored = await putFile(blob, `${prefix}ios/manifest.json`, manifestText, "application/json", REPLACEABLE_MAX_AGE_SECONDS);
  return { manifestUrl: stored.url, bundleUrl: uploaded[0].url, manifest, manifestText };
}

async function exportAndUpload(sandbox: Sandbox, input: Omit<BuildStaticBundleInput, "sandboxId">, options: BuildStaticBundleOptions) {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const command = options.exportCommand ?? getConfig().BUNDLE_EXPORT_COMMAND ?? DEFAULT_EXPORT_COMMAND;
  const { appConfig, output } = await withCommitCheckout(sandbox, input.commitSha, async (dir) => {
    const appConfig = await readAppConfig(sandbox, dir);
    await runExportCommand(sandbox, command, options.exportTimeoutMs ?? DEFAULT_EXPORT_TIMEOUT_MS, dir);
    return { appConfig, output: await readExportOutput(sandbox, concurrency, dir) };
  });
  const createdAt = (options.now ?? (() => new Date()))();
  const { manifest, manifestText, ...urls } = await publishExport(options.blob ?? getBlobStore(), input, { output, appConfig, createdAt, concurrency }).catch(
    (error: unknown) => {
      throw new BundleBuildError("upload", `Uploading the bundle failed: ${(error as Error).message}`, { cause: error });
    },
  );
  const size = output.assets.reduce((total, asset) => total + asset.bytes.byteLength, output.bundle.byteLength);
  await publishBundle(await getStore(), {
    ...input,
    platform: BUNDLE_PLATFORM,
    runtimeVersion: manifest.runtimeVersion,
    updateId: manifest.id,
    manifest: manifestText,
    size,
    createdAt,
  }).catch((error: unknown) => {
    throw new BundleBuildError("publish", `Publishing the bundle failed: ${(error as Error).message}`, { cause: error });
  });
  log.info("static bundle uploaded and published", { projectId: input.projectId, commitSha: input.commitSha, assets: output.assets.length, bundleBytes: output.bundle.byteLength });
  return urls;
}

function failure(error: unknown, context: Record<string, unknown>): BuildStaticBundleResult {
  const known = isAppError(error);
  const message = redactSecrets(known ? error.message : `The bundle build failed: ${(error as Error)?.message ?? String(error)}`);
  log.warn("static bundle build failed", { ...context, error: message });
  return { success: false, error: message, code: known ? error.code : "bundle_build_failed", status: known ? error.status : 502 };
}

/**
 * Exports the app in an already connected sandbox and uploads it under
 * `bundles/<project_id>/<commit_id>/` (spec 2.9): `ios/index.js`, `assets/<file>`,
 * `assetmap.json`, then `ios/manifest.json` (Expo Updates v1); then publishes it: the project's
 * update URL serves it to apps of its runtime version (lib/updates). Never throws.
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
    const urls = await serialized(sandbox.sandboxId, () => exportAndUpload(sandbox, { ...input, commitSha }, options));
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
