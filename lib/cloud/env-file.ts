import { APP_DIR, type Sandbox } from "@/lib/sandbox";

/** The client-visible variable holding the deployment URL (spec 2.8, 5.4). */
export const BACKEND_URL_VARIABLE = "APP_PUBLIC_BACKEND_URL";

export const DEFAULT_ENV_FILE = `${APP_DIR}/.env.local`;

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Quotes a value when dotenv would otherwise read it differently (spaces, #, quotes). */
function formatValue(value: string): string {
  if (/[\r\n]/.test(value)) throw new TypeError("Environment file values must be a single line.");
  return /^[A-Za-z0-9_./:@%+,=-]*$/.test(value) ? value : JSON.stringify(value);
}

/**
 * Sets `key=value` in a dotenv file inside the sandbox (spec 4.5): replaces every existing
 * assignment of the key (also `export KEY=`), keeps all other lines and comments, and creates
 * the file when missing.
 */
export async function updateSandboxEnvFile(
  sandbox: Sandbox,
  key: string,
  value: string,
  filePath: string = DEFAULT_ENV_FILE,
): Promise<void> {
  if (!VARIABLE_NAME.test(key)) throw new TypeError(`"${key}" is not a valid environment variable name.`);
  const existing = (await sandbox.files.exists(filePath)) ? await sandbox.files.read(filePath) : "";
  const assignment = new RegExp(`^\\s*(?:export\\s+)?${key}\\s*=`);
  const lines = existing === "" ? [] : existing.replace(/\r?\n$/, "").split(/\r?\n/);
  const kept = lines.filter((line) => !assignment.test(line));
  kept.push(`${key}=${formatValue(value)}`);
  await sandbox.files.write(filePath, kept.join("\n") + "\n");
}
