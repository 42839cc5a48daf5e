import { execFile, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { BACKEND_PACKAGE, BACKEND_PACKAGE_RANGE } from "@/lib/app-names";
import { AppError } from "@/lib/errors";
import { getConfig } from "@/lib/config";
import { log, redactSecrets } from "@/lib/log";
import { processSingleton } from "@/lib/singletons";
import type { ToolchainProgress, ToolchainState } from "./state";

export type { ToolchainPhase, ToolchainProgress, ToolchainState } from "./state";

/**
 * The app toolchain: the npm dependencies of an app template (Expo, Metro, React Native Web…),
 * installed once from the registry into a machine-wide directory and hard-linked into every new
 * local sandbox, so a sandbox has a working `node_modules` in well under a second. It plays the
 * part of the dependencies E2B bakes into a sandbox template's image. Like such an image, it also
 * holds the backend package the enable step adds: an app's lock file stays the template's, and
 * enabling only records the package npm finds installed, instead of fetching and unpacking it.
 */

/** Thrown when the toolchain cannot be prepared; the message says what npm answered. */
export class ToolchainError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(503, "toolchain_unavailable", message, options);
  }
}

export interface ToolchainOptions {
  /** Machine-wide directory holding one prepared toolchain per template package.json. */
  dir: string;
  /** Extra environment for npm (a registry override in tests). */
  npmEnv?: Record<string, string>;
  /** Receives progress lines while a toolchain is prepared. @default log.info */
  onProgress?: (line: string) => void;
  /** How often progress is reported during the install, in milliseconds. @default 5000 */
  progressIntervalMs?: number;
}

/** A prepared toolchain for one template. */
export interface PreparedToolchain {
  /**
   * Directory holding `package.json`, `package-lock.json` and `node_modules` (the template's
   * dependencies plus the backend package), and {@link APP_LOCKFILE}.
   */
  root: string;
}


/** An app's files that decide what `npm install` does, as they were before the backend package was added. */
export interface AppInstallInputs {
  packageJson: Uint8Array;
  packageLock: Uint8Array;
  /** `node_modules/.package-lock.json`: what npm last installed there. */
  hiddenLock: Uint8Array;
}

/**
 * What the enable step's `npm install` wrote for an app as the toolchain made it, per sandbox
 * driver (its npm runs with that driver's configuration).
 */
const enableLockFile = (driver: string) => `enable-install.${driver}.json`;

/** The two lock files after an install: the app's, and `node_modules/.package-lock.json`. */
export interface InstalledLocks {
  packageLock: string;
  hiddenLock: string;
}

/** Whether two hidden lock files list the same packages at the same versions and contents. */
function sameInstalledPackages(before: Uint8Array | string, after: Uint8Array | string): boolean {
  const installed = (lock: Uint8Array | string) => {
    const { packages = {} } = JSON.parse(typeof lock === "string" ? lock : new TextDecoder().decode(lock)) as { packages?: Record<string, { version?: string; integrity?: string }> };
    return JSON.stringify(Object.entries(packages).map(([where, entry]) => [where, entry.version, entry.integrity]).sort());
  };
  return installed(before) === installed(after);
}

/** Written into a prepared toolchain last: its presence means the install completed. */
const READY_MARKER = ".ready";
/** npm rewrites this file in place on every install, so sandboxes get a copy, never a link. */
const HIDDEN_LOCKFILE = path.join("node_modules", ".package-lock.json");
/** The template's own lock file (without the backend package), which a new app starts from. */
const APP_LOCKFILE = "app-package-lock.json";
const INSTALL_TIMEOUT_MS = 20 * 60_000;
const exec = promisify(execFile);

async function exists(target: string): Promise<boolean> {
  return fs.stat(target).then(
    () => true,
    () => false,
  );
}

/** The npm cache shared by the toolchain install and sandbox installs (`npm install convex` at enable). */
export function npmCacheDir(options: Pick<ToolchainOptions, "dir">): string {
  return path.join(options.dir, "npm-cache");
}

/**
 * The cache home (`XDG_CACHE_HOME`) every local sandbox's commands share: Metro's export caches
 * (lib/bundles/export.ts). Local sandboxes run as the server's user on one machine, like the
 * shared npm cache.
 */
export function sandboxCacheHome(options: Pick<ToolchainOptions, "dir">): string {
  return path.join(options.dir, "sandbox-cache");
}

/** Environment for npm run on behalf of a sandbox: the shared cache, and the registry when the host sets one. */
export function sandboxNpmEnv(options: Pick<ToolchainOptions, "dir" | "npmEnv">): Record<string, string> {
  const registry = options.npmEnv?.npm_config_registry ?? process.env.npm_config_registry;
  return { npm_config_cache: npmCacheDir(options), ...(registry ? { npm_config_registry: registry } : {}), npm_config_update_notifier: "false" };
}

/** The last lines npm printed on failure, minus its log-file boilerplate. */
function npmFailure(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^npm (warn|notice|http)|A complete log of this run/.test(line));
  return redactSecrets(lines.slice(-6).join(" | ")).slice(0, 1_500);
}

function runNpm(args: string[], cwd: string, options: ToolchainOptions, onLine?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", args, {
      cwd,
      env: { ...process.env, ...sandboxNpmEnv(options), ...options.npmEnv, npm_config_fund: "false", npm_config_audit: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let partial = "";
    const keep = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output = (output + text).slice(-20_000);
      if (!onLine) return;
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      lines.forEach(onLine);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new ToolchainError(`Could not run npm: ${error.message}`, { cause: error }));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const registry = options.npmEnv?.npm_config_registry ?? process.env.npm_config_registry ?? "the npm registry";
      reject(
        new ToolchainError(
          `Preparing the app toolchain failed: \`npm ${args[0]}\` ${signal ? `was stopped (${signal})` : `exited with ${code}`} ` +
            `while installing from ${registry}: ${npmFailure(output) || "no output"}. Check that the registry can be reached, then retry.`,
        ),
      );
    });
  });
}

/**
 * Follows npm's `--loglevel http` lines: a manifest read (`http fetch GET 200 <registry>/<name>`)
 * while it resolves the tree, then a tarball fetched or taken from its cache (`….tgz`) per package.
 */
export class NpmProgress {
  private readonly tarballs = new Set<string>();
  private manifests = 0;

  /** Counts one line of npm's output; anything but its http lines is ignored. */
  read(line: string): void {
    const match = /^npm http (?:fetch \w+ \d+|cache) (\S+)/.exec(line.trim());
    if (!match) return;
    if (/\.tgz(?:$|\?)/.test(match[1])) this.tarballs.add(match[1].replace(/^.*?@(?=https?:)/, ""));
    else this.manifests += 1;
  }

  /** The counts so far; `bytes` is the caller's to measure. */
  snapshot(bytes: number): ToolchainProgress {
    return { phase: this.tarballs.size > 0 ? "downloading" : "resolving", manifests: this.manifests, packages: this.tarballs.size, bytes };
  }
}

/** Bytes under a directory, counting files only; a missing directory holds none. */
async function directoryBytes(dir: string): Promise<number> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    total += (await fs.stat(path.join(entry.parentPath, entry.name)).catch(() => null))?.size ?? 0;
  }
  return total;
}

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** One progress line for the terminal. */
export function describeProgress(progress: ToolchainProgress, seconds: number): string {
  const counts =
    progress.phase === "resolving"
      ? `${progress.manifests} package manifests read`
      : progress.phase === "downloading"
        ? `${progress.packages} packages to fetch or unpack from the npm cache, ${megabytes(progress.bytes)} downloaded`
        : "writing the app's lock file, making the shared files read-only";
  return `  … ${progress.phase}: ${counts} (${seconds} s)`;
}

async function countPackages(nodeModules: string): Promise<number> {
  const entries = await fs.readdir(nodeModules).catch(() => [] as string[]);
  let count = 0;
  for (const entry of entries) {
    if (entry.startsWith(".")) continue;
    count += entry.startsWith("@") ? (await fs.readdir(path.join(nodeModules, entry)).catch(() => [])).length : 1;
  }
  return count;
}

/** Files only: a sandbox's directories must stay writable, and `cp -al` copies directory modes. */
async function makeFilesReadOnly(root: string): Promise<void> {
  await exec("find", [root, "-type", "f", "-perm", "/222", "-exec", "chmod", "a-w", "{}", "+"], { maxBuffer: 1 << 20 });
}

/** In the install lock: the progress of the install, for processes waiting on it. */
const PROGRESS_FILE = "progress.json";
/** How often a process waiting on another's install looks at it. */
const LOCK_POLL_MS = 1_000;
/** A lock directory whose pid was never written is taken over after this long. */
const UNWRITTEN_LOCK_MS = 30_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readJson<T>(file: string): Promise<T | null> {
  const text = await fs.readFile(file, "utf8").catch(() => null);
  try {
    return text === null ? null : (JSON.parse(text) as T);
  } catch {
    return null;
  }
}

async function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  const partial = `${file}.${crypto.randomBytes(4).toString("hex")}`;
  await fs.writeFile(partial, JSON.stringify(value));
  await fs.rename(partial, file);
}

/** Takes the install lock: true when this process now holds it; a dead holder's lock (and its staging) is removed first. */
async function takeLock(lock: string): Promise<boolean> {
  try {
    await fs.mkdir(lock);
    await fs.writeFile(path.join(lock, "pid"), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const holder = Number(await fs.readFile(path.join(lock, "pid"), "utf8").catch(() => "0"));
  const age = Date.now() - ((await fs.stat(lock).catch(() => null))?.mtimeMs ?? Date.now());
  if (holder ? isAlive(holder) : age < UNWRITTEN_LOCK_MS) return false;
  await fs.rm(lock, { recursive: true, force: true });
  return takeLock(lock);
}

/**
 * Prepares and shares app toolchains. Concurrent callers in one process share one install;
 * processes take turns through an install lock, so one machine installs a toolchain once.
 */
export class AppToolchain {
  private readonly pending = new Map<string, Promise<PreparedToolchain>>();
  private current: ToolchainState = { state: "idle" };

  constructor(private readonly options: ToolchainOptions) {}

  /** What the toolchain is doing, for the dashboard's "preparing app toolchain" step. */
  get status(): ToolchainState {
    return this.current;
  }

  /** Whether the template's toolchain is installed (without installing it). */
  async isReady(templateRoot: string): Promise<boolean> {
    return exists(path.join(await this.rootFor(templateRoot), READY_MARKER));
  }

  private async rootFor(templateRoot: string): Promise<string> {
    const manifest = await fs.readFile(path.join(templateRoot, "package.json"));
    const key = crypto
      .createHash("sha256")
      .update(manifest)
      .update(`${process.platform}-${process.arch}-${process.versions.modules}-${BACKEND_PACKAGE}@${BACKEND_PACKAGE_RANGE}`)
      .digest("hex")
      .slice(0, 16);
    return path.join(this.options.dir, `${path.basename(templateRoot)}-${key}`);
  }

  /**
   * What `npm install` wrote when the enable step added the backend package to an app still as
   * this toolchain made it (the template's package.json and lock file, this toolchain's
   * `node_modules`), in a sandbox of `driver`: the same inputs give the same files, so later
   * enables of such apps skip seconds of npm. `null` when nothing was recorded or the app differs
   * in any input: then npm must run. Never installs anything.
   */
  async lockWithBackendPackage(templateRoot: string, driver: string, app: AppInstallInputs): Promise<InstalledLocks | null> {
    const root = await this.rootFor(templateRoot);
    if (!(await this.madeByThisToolchain(templateRoot, root, app))) return null;
    const recorded = await fs.readFile(path.join(root, enableLockFile(driver)), "utf8").catch(() => null);
    return recorded === null ? null : (JSON.parse(recorded) as InstalledLocks);
  }

  /**
   * Records what `npm install` wrote, for {@link lockWithBackendPackage}, when the app's inputs
   * were this toolchain's and npm installed nothing into `node_modules` (its hidden lock file
   * lists the same packages; npm may still add their download addresses to it).
   */
  async recordLockWithBackendPackage(templateRoot: string, driver: string, before: AppInstallInputs, after: InstalledLocks): Promise<void> {
    const root = await this.rootFor(templateRoot);
    if (!sameInstalledPackages(before.hiddenLock, after.hiddenLock) || !(await this.madeByThisToolchain(templateRoot, root, before))) return;
    const file = path.join(root, enableLockFile(driver));
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
    await fs.writeFile(partial, JSON.stringify(after));
    await fs.rename(partial, file);
  }

  private async madeByThisToolchain(templateRoot: string, root: string, app: AppInstallInputs): Promise<boolean> {
    const read = (file: string) => fs.readFile(file).catch(() => null);
    const [ready, manifest, appLock, hiddenLock] = await Promise.all([
      exists(path.join(root, READY_MARKER)),
      read(path.join(templateRoot, "package.json")),
      read(path.join(root, APP_LOCKFILE)),
      read(path.join(root, HIDDEN_LOCKFILE)),
    ]);
    const same = (expected: Buffer | null, actual: Uint8Array) => expected !== null && expected.equals(actual);
    return ready && same(manifest, app.packageJson) && same(appLock, app.packageLock) && same(hiddenLock, app.hiddenLock);
  }

  /** The template's toolchain, installed from npm on first use (progress goes to `onProgress`). */
  prepare(templateRoot: string): Promise<PreparedToolchain> {
    let pending = this.pending.get(templateRoot);
    if (!pending) {
      pending = this.prepareOnce(templateRoot).finally(() => this.pending.delete(templateRoot));
      this.pending.set(templateRoot, pending);
    }
    return pending;
  }

  /**
   * The name of the template's prepared toolchain (its folder in the toolchain directory), which
   * the local sandbox service offers as a template (`SANDBOX_SERVICE_TOOLCHAIN_DIR`).
   */
  async templateName(templateRoot: string): Promise<string> {
    return path.basename((await this.prepare(templateRoot)).root);
  }

  /** The template's own lock file, describing the toolchain's packages: the app's first commit records it. */
  async appLockfile(templateRoot: string): Promise<Uint8Array> {
    return fs.readFile(path.join((await this.prepare(templateRoot)).root, APP_LOCKFILE));
  }

  /**
   * Gives an app directory the template's dependencies: `node_modules` hard-linked from the
   * toolchain (copied where links cannot cross file systems), the hidden lock file describing
   * them, and the template's lock file, which the first commit records.
   */
  async linkInto(templateRoot: string, appDir: string): Promise<void> {
    const { root } = await this.prepare(templateRoot);
    const target = path.join(appDir, "node_modules");
    await fs.rm(target, { recursive: true, force: true });
    await exec("cp", ["-al", path.join(root, "node_modules"), target]).catch(async () => {
      await fs.rm(target, { recursive: true, force: true });
      await exec("cp", ["-a", path.join(root, "node_modules"), target]);
    });
    const hiddenLock = path.join(appDir, HIDDEN_LOCKFILE);
    await fs.rm(hiddenLock, { force: true });
    await fs.copyFile(path.join(root, HIDDEN_LOCKFILE), hiddenLock);
    await fs.chmod(hiddenLock, 0o644);
    await fs.copyFile(path.join(root, APP_LOCKFILE), path.join(appDir, "package-lock.json"));
    await fs.chmod(path.join(appDir, "package-lock.json"), 0o644);
  }

  private async prepareOnce(templateRoot: string): Promise<PreparedToolchain> {
    const root = await this.rootFor(templateRoot);
    try {
      await this.installUnlessReady(templateRoot, root);
      this.current = { state: "ready" };
      return { root };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.current = { state: "failed", message };
      log.warn("app toolchain could not be prepared", { error: message });
      throw error instanceof ToolchainError ? error : new ToolchainError(`Preparing the app toolchain failed: ${message}`, { cause: error });
    }
  }

  /**
   * Installs the toolchain under its install lock, a directory beside it holding the installing
   * process's pid, its progress and its staging directory. While another live process holds the
   * lock (`npm start` installs in a child while it builds; test runs of several checkouts share a
   * machine's toolchain) this one follows its progress and waits for it; a holder that died or
   * failed leaves the lock free, and this process installs.
   */
  private async installUnlessReady(templateRoot: string, root: string): Promise<void> {
    const lock = path.join(this.options.dir, `.install-${path.basename(root)}`);
    await fs.mkdir(this.options.dir, { recursive: true });
    for (;;) {
      if (await exists(path.join(root, READY_MARKER))) return;
      // Preparing from now on, whoever installs: the page polls only while it says so.
      if (this.current.state !== "preparing") this.current = { state: "preparing", since: new Date().toISOString(), phase: "resolving", manifests: 0, packages: 0, bytes: 0 };
      if (await takeLock(lock)) {
        try {
          if (!(await exists(path.join(root, READY_MARKER)))) await this.install(await fs.readFile(path.join(templateRoot, "package.json")), root, lock);
        } finally {
          await fs.rm(lock, { recursive: true, force: true });
        }
        return;
      }
      const progress = await readJson<{ since: string } & ToolchainProgress>(path.join(lock, PROGRESS_FILE));
      if (progress) this.current = { state: "preparing", ...progress };
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }

  /**
   * Writes the template's own lock file into `staging`: npm drops the backend package from the
   * toolchain's lock (no download: the lock only), so every other version stays the installed one.
   */
  private async writeAppLockfile(manifest: Buffer, staging: string): Promise<void> {
    const dir = path.join(staging, ".app-lock");
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, "package.json"), manifest);
    await fs.copyFile(path.join(staging, "package-lock.json"), path.join(dir, "package-lock.json"));
    await runNpm(["install", "--package-lock-only", "--no-audit", "--no-fund", "--prefer-offline"], dir, this.options);
    await fs.rename(path.join(dir, "package-lock.json"), path.join(staging, APP_LOCKFILE));
    await fs.rm(dir, { recursive: true, force: true });
  }

  private async install(manifest: Buffer, root: string, lock: string): Promise<void> {
    const report = this.options.onProgress ?? ((line: string) => log.info(line));
    const staging = path.join(lock, "staging");
    const since = new Date();
    const npm = new NpmProgress();
    const cache = npmCacheDir(this.options);
    const cacheBefore = await directoryBytes(cache);
    let finishing = false;
    const publish = async (progress: ToolchainProgress) => {
      this.current = { state: "preparing", since: since.toISOString(), ...progress };
      await writeJsonAtomically(path.join(lock, PROGRESS_FILE), { since: since.toISOString(), ...progress });
    };
    await publish(npm.snapshot(0));
    report(`Preparing the app toolchain (first use): installing the template's dependencies from npm into ${root}…`);
    let stopped = false;
    const ticker = setInterval(() => {
      void directoryBytes(cache).then(async (bytes) => {
        if (stopped) return;
        const progress = finishing ? { ...npm.snapshot(bytes - cacheBefore), phase: "finishing" as const } : npm.snapshot(bytes - cacheBefore);
        report(describeProgress(progress, Math.round((Date.now() - since.getTime()) / 1000)));
        // The lock (and the file in it) goes once the install ends.
        await publish(progress).catch(() => undefined);
      });
    }, this.options.progressIntervalMs ?? 5_000);
    try {
      await fs.mkdir(staging, { recursive: true });
      await fs.writeFile(path.join(staging, "package.json"), withBackendPackage(manifest));
      await runNpm(["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel", "http"], staging, this.options, (line) => npm.read(line));
      finishing = true;
      await this.writeAppLockfile(manifest, staging);
      await makeFilesReadOnly(path.join(staging, "node_modules"));
      const packages = await countPackages(path.join(staging, "node_modules"));
      await fs.writeFile(path.join(staging, READY_MARKER), new Date().toISOString());
      await fs.rename(staging, root).catch(async (error: NodeJS.ErrnoException) => {
        // Another process finished first: its toolchain is as good as ours.
        if (!(await exists(path.join(root, READY_MARKER)))) throw error;
      });
      report(`App toolchain ready: ${packages} packages in ${Math.round((Date.now() - since.getTime()) / 1000)} s.`);
    } finally {
      stopped = true;
      clearInterval(ticker);
    }
  }
}

/** The toolchain's package.json: the template's, with the backend package among its dependencies. */
function withBackendPackage(manifest: Buffer): string {
  const parsed = JSON.parse(manifest.toString("utf8")) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  if (parsed.dependencies?.[BACKEND_PACKAGE] || parsed.devDependencies?.[BACKEND_PACKAGE]) return manifest.toString("utf8");
  return JSON.stringify({ ...parsed, dependencies: { ...parsed.dependencies, [BACKEND_PACKAGE]: BACKEND_PACKAGE_RANGE } }, null, 2);
}

/** The template new projects start from; its toolchain is the one prepared at start. */
export const APP_TEMPLATE_ROOT = path.join(/*turbopackIgnore: true*/ process.cwd(), "templates", "app");

/**
 * The process-wide toolchain in `APP_TOOLCHAIN_DIR`, shared by every route bundle; progress
 * lines go to the terminal.
 */
export function getAppToolchain(): AppToolchain {
  return processSingleton("appToolchain", () => new AppToolchain({ dir: getConfig().APP_TOOLCHAIN_DIR, onProgress: (line) => console.log(line) }));
}

/** Starts preparing the template's toolchain unless it is ready or under way; never throws. */
export function warmUpAppToolchain(): ToolchainState {
  const toolchain = getAppToolchain();
  toolchain.prepare(APP_TEMPLATE_ROOT).catch(() => undefined);
  return toolchain.status;
}

/** The process-wide toolchain's state, `ready` also when an earlier process installed it. */
export async function readAppToolchainStatus(): Promise<ToolchainState> {
  const toolchain = getAppToolchain();
  if (toolchain.status.state === "idle" && (await toolchain.isReady(APP_TEMPLATE_ROOT))) return { state: "ready" };
  return toolchain.status;
}

