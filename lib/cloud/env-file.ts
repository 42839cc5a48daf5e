import { BACKEND_SITE_URL_VARIABLE, BACKEND_URL_VARIABLE, LEGACY_NAMES, siteUrlFor } from "@/lib/app-names";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";

/** The app's local env file: Expo loads it at bundle time, the convex CLI writes to it too. */
export const DEFAULT_ENV_FILE = `${APP_DIR}/.env.local`;

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Quotes a value when dotenv would otherwise read it differently (spaces, #, quotes). */
function formatValue(value: string): string {
  if (/[\r\n]/.test(value)) throw new TypeError("Environment file values must be a single line.");
  return /^[A-Za-z0-9_./:@%+,=-]*$/.test(value) ? value : JSON.stringify(value);
}

/**
 * Applies changes to a dotenv file inside the sandbox (spec 4.5): each key set to a string
 * replaces every existing assignment of it (also `export KEY=`), each key set to null is removed;
 * all other lines and comments are kept. Creates the file when missing, writes nothing when the
 * content would not change.
 */
export async function updateSandboxEnvFile(
  sandbox: Sandbox,
  changes: Record<string, string | null>,
  filePath: string = DEFAULT_ENV_FILE,
): Promise<void> {
  const keys = Object.keys(changes);
  for (const key of keys) {
    if (!VARIABLE_NAME.test(key)) throw new TypeError(`"${key}" is not a valid environment variable name.`);
  }
  const existing = (await sandbox.files.exists(filePath)) ? await sandbox.files.read(filePath) : "";
  const assignment = new RegExp(`^\\s*(?:export\\s+)?(?:${keys.join("|")})\\s*=`);
  const lines = existing === "" ? [] : existing.replace(/\r?\n$/, "").split(/\r?\n/);
  const kept = lines.filter((line) => !assignment.test(line));
  for (const [key, value] of Object.entries(changes)) {
    if (value !== null) kept.push(`${key}=${formatValue(value)}`);
  }
  const content = kept.length === 0 ? "" : kept.join("\n") + "\n";
  if (content !== existing) await sandbox.files.write(filePath, content);
}

/**
 * Points the app at a deployment: `EXPO_PUBLIC_CONVEX_URL` and, when the deployment has a known
 * HTTP-actions host, `EXPO_PUBLIC_CONVEX_SITE_URL` (the values the convex CLI itself writes, so
 * the two never fight). Drops the variable earlier versions of the service wrote.
 */
export function writeBackendUrlToEnvFile(sandbox: Sandbox, deploymentUrl: string): Promise<void> {
  const siteUrl = siteUrlFor(deploymentUrl);
  return updateSandboxEnvFile(sandbox, {
    [LEGACY_NAMES.urlVariable]: null,
    [BACKEND_URL_VARIABLE]: deploymentUrl,
    ...(siteUrl ? { [BACKEND_SITE_URL_VARIABLE]: siteUrl } : {}),
  });
}

/** Unpoints the app (disconnect): it keeps working without a backend. */
export function removeBackendUrlFromEnvFile(sandbox: Sandbox): Promise<void> {
  return updateSandboxEnvFile(sandbox, { [LEGACY_NAMES.urlVariable]: null, [BACKEND_URL_VARIABLE]: null, [BACKEND_SITE_URL_VARIABLE]: null });
}
