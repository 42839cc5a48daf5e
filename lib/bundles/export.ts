import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { contentTypeForPathname } from "@/lib/blob/content-type";
import { redactSecrets } from "@/lib/log";
import { PLATFORMS, type Platform } from "@/lib/updates/streams";
import { APP_DIR, CommandExitError, FileNotFoundError, isSandboxError, type Sandbox, SANDBOX_HOME, SandboxTimeoutError } from "@/lib/sandbox";
import { verifyCommit } from "./commit";
import { BundleBuildError } from "./errors";
import { mapWithConcurrency } from "./pool";

/** Expo's own export of the given platforms, Hermes bytecode each (what runs when `BUNDLE_EXPORT_COMMAND` is unset). */
export const exportCommandFor = (platforms: readonly Platform[]) =>
  `npx expo export ${platforms.map((platform) => `--platform ${platform}`).join(" ")} --output-dir dist --dump-assetmap`;

/**
 * What a build exports when the request names no platforms: iOS and Android, in one Metro run
 * with the assets shared. An app reaches phones of both, and Expo's own `eas update` publishes
 * both by default; a request for one platform (`platforms`) exports less.
 */
export const DEFAULT_PLATFORMS: readonly Platform[] = PLATFORMS;
export const DEFAULT_EXPORT_COMMAND = exportCommandFor(DEFAULT_PLATFORMS);

/** Where every export command must write, relative to the checkout (`--output-dir dist`). */
const OUTPUT_DIR = "dist";
/** Checkouts of single commits, apart from the live working tree. */
const CHECKOUTS_DIR = `${SANDBOX_HOME}/.exports`;
const OUTPUT_TAIL_CHARS = 1_000;

const run = (sandbox: Sandbox, command: string, cwd: string) => sandbox.commands.run(command, { cwd, timeoutMs: 120_000 });

/**
 * Runs `build` on a checkout of `commitSha` (a git worktree) so the live working tree, where the
 * assistant keeps editing, is never touched. The checkout gets the live app's dependencies (hard
 * links, else a link to their directory) and `.env.local`, which is never committed but holds
 * the `EXPO_PUBLIC_*` values the export inlines. The checkout is removed afterwards, whatever
 * happened.
 */
export async function withCommitCheckout<T>(sandbox: Sandbox, commitSha: string, build: (dir: string) => Promise<T>): Promise<T> {
  const dir = `${CHECKOUTS_DIR}/${await verifyCommit(sandbox, commitSha)}`;
  const removeCheckout = `git worktree remove --force ${dir} 2>/dev/null; rm -rf ${dir}; git worktree prune`;
  await run(sandbox, `${removeCheckout} && mkdir -p ${CHECKOUTS_DIR} && git worktree add --detach --quiet ${dir} ${commitSha}`, APP_DIR);
  try {
    await run(
      sandbox,
      [
        // Hard links need files the sandbox's user may link: a walled local sandbox's toolchain
        // files are root's (fs.protected_hardlinks refuses them), so there the checkout gets a
        // link to the live app's node_modules, which the export config has Metro watch.
        `if [ -d ${APP_DIR}/node_modules ]; then cp -al ${APP_DIR}/node_modules node_modules 2>/dev/null || { rm -rf node_modules && ln -s ${APP_DIR}/node_modules node_modules; }; fi`,
        `if [ -f ${APP_DIR}/.env.local ]; then cp ${APP_DIR}/.env.local .env.local; fi`,
      ].join(" && "),
      dir,
    );
    return await build(dir);
  } finally {
    await run(sandbox, removeCheckout, APP_DIR).catch(() => undefined);
  }
}

/** The Metro config `expo export` loads (EXPO_OVERRIDE_METRO_CONFIG): the app's own, with a shared cache. */
const EXPORT_CONFIG_FILES = ["metro.config.cjs", "transform-worker.cjs"];
const EXPORT_CONFIG_DIR = `${CHECKOUTS_DIR}/.metro-config`;
const EXPORT_TEMPLATE_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "templates", "expo-export");

/**
 * Metro's transform cache is keyed by file contents, not by the `EXPO_PUBLIC_*` values Babel
 * inlines: a plain shared cache would ship an old deployment URL after the URL changed. The export
 * config (templates/expo-export) keeps one transform cache for every export of the machine and
 * leaves out of it only the modules whose source names an `EXPO_PUBLIC_*` variable, so a newly
 * enabled app's first export finds node_modules transformed already. The cache lives under
 * `$XDG_CACHE_HOME` when the sandbox sets it (the local driver points every sandbox at one
 * machine-wide cache home).
 *
 * `$TMPDIR`, where Expo's own cache goes when a CLI ignores the override, stays one per set of env
 * files: such an export is cold, but never stale.
 */
const EXPORT_ENVIRONMENT = [
  'CACHE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}"',
  'export CLOUD_BACKEND_EXPORT_CACHE="$CACHE_HOME/expo-export/metro-cache"',
  `export EXPO_OVERRIDE_METRO_CONFIG=${EXPORT_CONFIG_DIR}/metro.config.cjs`,
  'TMPDIR="$CACHE_HOME/expo-export/tmp-$(cat .env .env.local .env.production .env.production.local 2>/dev/null | sha256sum | cut -c1-16)"',
  'mkdir -p "$TMPDIR" && export TMPDIR',
].join(" && ");

async function writeExportConfig(sandbox: Sandbox): Promise<void> {
  await sandbox.files.write(
    EXPORT_CONFIG_FILES.map((name) => ({ path: `${EXPORT_CONFIG_DIR}/${name}`, data: fs.readFileSync(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ EXPORT_TEMPLATE_DIR, name), "utf8") })),
  );
}

/**
 * Runs the export command in a checkout. A failing or overrunning command becomes a
 * `BundleBuildError("export")` quoting the (redacted) end of its output, which is where Metro
 * and Expo print the error.
 */
export async function runExportCommand(sandbox: Sandbox, command: string, timeoutMs: number, dir: string): Promise<void> {
  await Promise.all([sandbox.files.remove(`${dir}/${OUTPUT_DIR}`), writeExportConfig(sandbox)]);
  try {
    await sandbox.commands.run(`${EXPORT_ENVIRONMENT} && ${command}`, { cwd: dir, timeoutMs, envs: { EXPO_NO_TELEMETRY: "1", CI: "1" } });
  } catch (error) {
    if (isSandboxError(error, CommandExitError)) {
      const output = (error.stderr.trim() || error.stdout.trim()).slice(-OUTPUT_TAIL_CHARS);
      const reason = error.error ?? `exit code ${error.exitCode}`;
      throw new BundleBuildError("export", `The export command failed (${reason})${output ? `: ${redactSecrets(output)}` : "."}`, { cause: error });
    }
    if (isSandboxError(error, SandboxTimeoutError)) {
      throw new BundleBuildError("export", `The export command did not finish within ${Math.round(timeoutMs / 1000)} s.`, { cause: error });
    }
    throw error;
  }
}

// Paths from metadata.json become blob pathnames: relative, no `..`, asset names a single segment.
const bundlePath = z.string().regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[\w./@-]+$/, "unsafe bundle path");
const assetPath = z.string().regex(/^assets\/[\w-][\w.-]*$/, "unsafe asset path");

const platformMetadata = z.object({ bundle: bundlePath, assets: z.array(z.object({ path: assetPath, ext: z.string().regex(/^\w+$/) })) });
const metadataSchema = z.object({
  fileMetadata: z.partialRecord(z.enum(PLATFORMS), platformMetadata).refine((platforms) => Object.keys(platforms).length > 0, "no ios or android bundle"),
});

const assetMapSchema = z.record(
  z.string(),
  z.looseObject({ type: z.string().regex(/^\w+$/), fileHashes: z.array(z.string()).optional() }),
);

export interface ExportedAsset {
  /** File name under `assets/` (the content hash Metro names it by). */
  key: string;
  /** Extension without the dot, from the asset map (else metadata.json). */
  type: string;
  contentType: string;
  bytes: Uint8Array;
}

/** One platform's part of an export. */
export interface PlatformExport {
  /** The bundle, byte for byte (Hermes bytecode is binary). */
  bundle: Uint8Array;
  /** The keys (file names under `assets/`) of the assets this platform's bundle uses. */
  assetKeys: string[];
}

export interface ExportOutput {
  /** Each exported platform's bundle; at least one. */
  platforms: Partial<Record<Platform, PlatformExport>>;
  /** The assets of every platform, each once. */
  assets: ExportedAsset[];
  /** assetmap.json without build-machine paths (`files`, `fileSystemLocation`); null when absent. */
  assetMap: Record<string, Record<string, unknown>> | null;
}

async function readJsonOutput<S extends z.ZodType>(sandbox: Sandbox, outputDir: string, name: string, schema: S): Promise<z.output<S> | null> {
  let text: string;
  try {
    text = new TextDecoder().decode(await sandbox.files.read(`${outputDir}/${name}`, { format: "bytes" }));
  } catch (error) {
    if (isSandboxError(error, FileNotFoundError)) return null;
    throw error;
  }
  let parsed: z.ZodSafeParseResult<z.output<S>>;
  try {
    parsed = schema.safeParse(JSON.parse(text));
  } catch {
    throw new BundleBuildError("output", `dist/${name} is not valid JSON.`);
  }
  if (!parsed.success) throw new BundleBuildError("output", `dist/${name} is not an Expo export ${name}: ${parsed.error.issues[0].message}`);
  return parsed.data;
}

/**
 * Reads an export from the checkout's `dist/`: each platform's bundle and the asset files named by
 * metadata.json (never globbed), every one as bytes, at most `concurrency` reads at a time.
 */
export async function readExportOutput(sandbox: Sandbox, concurrency: number, dir: string): Promise<ExportOutput> {
  const outputDir = `${dir}/${OUTPUT_DIR}`;
  const metadata = await readJsonOutput(sandbox, outputDir, "metadata.json", metadataSchema);
  if (!metadata) {
    throw new BundleBuildError("output", "The export wrote no dist/metadata.json; the export command must write Expo's export layout to dist/.");
  }
  const assetMap = await readJsonOutput(sandbox, outputDir, "assetmap.json", assetMapSchema);
  // Files are named by fileHashes[i]; the map is keyed by the asset's hash. Reverse it for types.
  const typeByFile = new Map<string, string>();
  for (const [hash, asset] of Object.entries(assetMap ?? {})) {
    for (const file of asset.fileHashes ?? [hash]) typeByFile.set(file, asset.type);
  }

  const exported = Object.entries(metadata.fileMetadata) as [Platform, z.output<typeof platformMetadata>][];
  const unique = [...new Map(exported.flatMap(([, files]) => files.assets).map((asset) => [asset.path, asset])).values()];
  const readBytes = (relative: string) =>
    sandbox.files.read(`${outputDir}/${relative}`, { format: "bytes" }).catch((error: unknown) => {
      if (isSandboxError(error, FileNotFoundError)) throw new BundleBuildError("output", `dist/metadata.json names ${relative}, which the export did not write.`);
      throw error;
    });
  const [bundles, assets] = await Promise.all([
    Promise.all(exported.map(([, files]) => readBytes(files.bundle))),
    mapWithConcurrency(unique, concurrency, async ({ path, ext }): Promise<ExportedAsset> => {
      const key = path.slice("assets/".length);
      const type = typeByFile.get(key) ?? ext;
      return { key, type, contentType: contentTypeForPathname(`${key}.${type}`), bytes: await readBytes(path) };
    }),
  ]);
  const platforms = Object.fromEntries(
    exported.map(([platform, files], index) => [platform, { bundle: bundles[index], assetKeys: [...new Set(files.assets.map((asset) => asset.path.slice("assets/".length)))] }]),
  );
  return { platforms, assets, assetMap: assetMap && withoutBuildPaths(assetMap) };
}

function withoutBuildPaths(assetMap: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(assetMap).map(([hash, asset]) => {
      const published = { ...asset };
      delete published.files;
      delete published.fileSystemLocation;
      return [hash, published];
    }),
  );
}
