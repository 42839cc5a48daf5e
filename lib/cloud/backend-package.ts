import semver from "semver";
import { BACKEND_PACKAGE, BACKEND_PACKAGE_RANGE, MIN_BACKEND_PACKAGE_VERSION } from "@/lib/app-names";
import { redactSecrets } from "@/lib/log";
import { APP_DIR, CommandExitError, SandboxTimeoutError, type Sandbox } from "@/lib/sandbox";

const PACKAGE_JSON = `${APP_DIR}/package.json`;
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
  if (error instanceof CommandExitError) {
    const output = (error.stderr.trim() || error.stdout.trim()).slice(-OUTPUT_TAIL_CHARS);
    return `Installing ${BACKEND_PACKAGE} failed (${error.error ?? `exit code ${error.exitCode}`})${output ? `: ${redactSecrets(output)}` : "."}`;
  }
  if (error instanceof SandboxTimeoutError) return `Installing ${BACKEND_PACKAGE} did not finish within ${INSTALL_TIMEOUT_MS / 1000} s.`;
  throw error;
}

/**
 * Spec 4.1: the app depends on the backend package. Adds `convex` to package.json's dependencies
 * (an app's own pin is kept, with a warning when it may be too old) and installs it, so Metro
 * resolves `convex/react` and the convex CLI runs; package.json and the lock file land in the
 * enable commit. Returns warnings: a failed install is reported, never hidden.
 */
export async function ensureBackendPackage(sandbox: Sandbox): Promise<string[]> {
  const text = await sandbox.files.read(PACKAGE_JSON);
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
    await sandbox.commands.run(INSTALL_COMMAND, { cwd: APP_DIR, timeoutMs: INSTALL_TIMEOUT_MS });
  } catch (error) {
    warnings.push(installFailure(error));
  }
  return warnings;
}
