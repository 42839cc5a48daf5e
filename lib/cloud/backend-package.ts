import semver from "semver";
import { BACKEND_PACKAGE, BACKEND_PACKAGE_RANGE, MIN_BACKEND_PACKAGE_VERSION } from "@/lib/app-names";
import { log, redactSecrets } from "@/lib/log";
import { APP_DIR, CommandExitError, FileNotFoundError, isSandboxError, SandboxTimeoutError, type Sandbox } from "@/lib/sandbox";
import { APP_TEMPLATE_ROOT, getAppToolchain } from "@/lib/toolchain";

const PACKAGE_JSON = `${APP_DIR}/package.json`;
const PACKAGE_LOCK = `${APP_DIR}/package-lock.json`;
const HIDDEN_LOCK = `${APP_DIR}/node_modules/.package-lock.json`;
const INSTALLED_MARKER = `${APP_DIR}/node_modules/${BACKEND_PACKAGE}/package.json`;
/** Installs the declared dependencies; the cache first, so an app on the warm toolchain installs offline. */
export const INSTALL_COMMAND = "npm install --no-audit --no-fund --prefer-offline";
const INSTALL_TIMEOUT_MS = 300_000;
const OUTPUT_TAIL_CHARS = 800;

type PackageJson = { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } & Record<string, unknown>;

/** The indentation a JSON file uses, so a rewrite keeps its style. */
function indentOf(text: string): string | number {
  return /^[ \t]+(?=")/m.exec(text)?.[0] ?? 2;
}

/** A warning when an app's own pin of the package may be older than the service supports. */
function pinWarning(range: string): string | null {
  const lowest = semver.validRange(range) ? semver.minVersion(range) : null;
  if (lowest && semver.gte(lowest, MIN_BACKEND_PACKAGE_VERSION)) return null;
  return `package.json pins ${BACKEND_PACKAGE} "${range}", which allows versions older than the supported ${MIN_BACKEND_PACKAGE_VERSION}; it was kept. Change it to "${BACKEND_PACKAGE_RANGE}" if the backend misbehaves.`;
}

function installFailure(error: unknown): string {
  if (isSandboxError(error, CommandExitError)) {
    const output = (error.stderr.trim() || error.stdout.trim()).slice(-OUTPUT_TAIL_CHARS);
    return `Installing ${BACKEND_PACKAGE} failed (${error.error ?? `exit code ${error.exitCode}`})${output ? `: ${redactSecrets(output)}` : "."}`;
  }
  if (isSandboxError(error, SandboxTimeoutError)) return `Installing ${BACKEND_PACKAGE} did not finish within ${INSTALL_TIMEOUT_MS / 1000} s.`;
  throw error;
}

const readIfExists = (sandbox: Sandbox, file: string) =>
  sandbox.files.read(file, { format: "bytes" }).catch((error: unknown) => {
    if (isSandboxError(error, FileNotFoundError)) return null;
    throw error;
  });

/** The lock files that decide, with package.json, what `npm install` does; null when one is missing. */
async function readLocks(sandbox: Sandbox): Promise<{ packageLock: Uint8Array; hiddenLock: Uint8Array } | null> {
  const [packageLock, hiddenLock] = await Promise.all([readIfExists(sandbox, PACKAGE_LOCK), readIfExists(sandbox, HIDDEN_LOCK)]);
  return packageLock && hiddenLock ? { packageLock, hiddenLock } : null;
}

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/**
 * Adds the package to the lock file and `node_modules`. An app still as the app toolchain made it
 * (whose `node_modules` holds the package already) gets the lock files npm wrote for the last such
 * app (lib/toolchain `lockWithBackendPackage`), which skips seconds of npm; otherwise npm runs, and
 * what it wrote is recorded for the next such app.
 */
async function installBackendPackage(sandbox: Sandbox, packageJson: Uint8Array): Promise<void> {
  const toolchain = getAppToolchain();
  const locks = await readLocks(sandbox);
  const before = locks && { packageJson, ...locks };
  const known = before && (await toolchain.lockWithBackendPackage(APP_TEMPLATE_ROOT, sandbox.driver, before));
  if (known) {
    await sandbox.files.write([
      { path: PACKAGE_LOCK, data: known.packageLock },
      { path: HIDDEN_LOCK, data: known.hiddenLock },
    ]);
    return;
  }
  await sandbox.commands.run(INSTALL_COMMAND, { cwd: APP_DIR, timeoutMs: INSTALL_TIMEOUT_MS });
  const after = before && (await readLocks(sandbox));
  if (!before || !after) return;
  const installed = { packageLock: decode(after.packageLock), hiddenLock: decode(after.hiddenLock) };
  await toolchain.recordLockWithBackendPackage(APP_TEMPLATE_ROOT, sandbox.driver, before, installed).catch((error: unknown) => {
    log.warn("could not record the lock file of an installed backend package", { error: (error as Error).message });
  });
}

/**
 * Spec 4.1: the app depends on the backend package. Adds `convex` to package.json's dependencies
 * (an app's own pin is kept, with a warning when it may be too old) and installs it, so Metro
 * resolves `convex/react` and the convex CLI runs; package.json and the lock file land in the
 * enable commit. Returns warnings: a failed install is reported, never hidden.
 */
export async function ensureBackendPackage(sandbox: Sandbox): Promise<string[]> {
  const original = await sandbox.files.read(PACKAGE_JSON, { format: "bytes" });
  const text = new TextDecoder().decode(original);
  let manifest: PackageJson;
  try {
    manifest = JSON.parse(text) as PackageJson;
  } catch {
    return [`package.json is not valid JSON, so ${BACKEND_PACKAGE} was not added; add "${BACKEND_PACKAGE}": "${BACKEND_PACKAGE_RANGE}" to its dependencies.`];
  }
  const pinned = manifest.dependencies?.[BACKEND_PACKAGE] ?? manifest.devDependencies?.[BACKEND_PACKAGE];
  const warnings: string[] = [];
  if (pinned) {
    const warning = pinWarning(pinned);
    if (warning) warnings.push(warning);
  } else {
    const dependencies = { ...manifest.dependencies, [BACKEND_PACKAGE]: BACKEND_PACKAGE_RANGE };
    manifest.dependencies = Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b)));
    await sandbox.files.write(PACKAGE_JSON, JSON.stringify(manifest, null, indentOf(text)) + (text.endsWith("\n") ? "\n" : ""));
  }
  if (pinned && (await sandbox.files.exists(INSTALLED_MARKER))) return warnings;
  try {
    await installBackendPackage(sandbox, original);
  } catch (error) {
    warnings.push(installFailure(error));
  }
  return warnings;
}
