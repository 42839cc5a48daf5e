import { BACKEND_CONFIG_FILE, BACKEND_URL_VARIABLE, FUNCTIONS_DIR, LEGACY_NAMES, ROOT_LAYOUT_CANDIDATES } from "@/lib/app-names";
import { getBackendTemplateFiles, renameEnvReads } from "@/lib/injection";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import { commitPaths } from "./git";
import { DEFAULT_ENV_FILE, writeBackendUrlToEnvFile } from "./env-file";

// What earlier versions of the service wrote: a config pointing at `backend/`, and a tsconfig
// extending the app's (which made type-checking the functions drag in the whole app).
const LEGACY_CONFIG = { functions: `${LEGACY_NAMES.functionsDir}/` };
const LEGACY_TSCONFIG = {
  extends: "../tsconfig.json",
  compilerOptions: { module: "esnext", moduleResolution: "bundler", lib: ["ES2021"], target: "ES2021" },
};

const MIGRATION_COMMIT = "Use the file and variable names Convex and Expo read";

async function readJson(sandbox: Sandbox, path: string): Promise<unknown> {
  if (!(await sandbox.files.exists(path))) return undefined;
  try {
    return JSON.parse(await sandbox.files.read(path)) as unknown;
  } catch {
    return undefined;
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function templateFile(path: string): string {
  const file = getBackendTemplateFiles().find((candidate) => candidate.path === path);
  if (!file) throw new Error(`templates/backend/files/${path} is missing.`);
  return file.content;
}

/** `backend.json` + `backend/` → `convex.json` + `convex/`, when they are what we wrote. Paths touched. */
async function renameFunctionsFolder(sandbox: Sandbox): Promise<string[]> {
  const legacyConfig = `${APP_DIR}/${LEGACY_NAMES.configFile}`;
  if (!sameJson(await readJson(sandbox, legacyConfig), LEGACY_CONFIG)) return [];
  const touched = [LEGACY_NAMES.configFile, BACKEND_CONFIG_FILE];
  const legacyDir = `${APP_DIR}/${LEGACY_NAMES.functionsDir}`;
  if ((await sandbox.files.exists(legacyDir)) && !(await sandbox.files.exists(`${APP_DIR}/${FUNCTIONS_DIR}`))) {
    await sandbox.commands.run(`mv -- ${LEGACY_NAMES.functionsDir} ${FUNCTIONS_DIR}`, { cwd: APP_DIR, timeoutMs: 30_000 });
    touched.push(LEGACY_NAMES.functionsDir, FUNCTIONS_DIR);
    const tsconfig = `${APP_DIR}/${FUNCTIONS_DIR}/tsconfig.json`;
    if (sameJson(await readJson(sandbox, tsconfig), LEGACY_TSCONFIG)) {
      await sandbox.files.write(tsconfig, templateFile(`${FUNCTIONS_DIR}/tsconfig.json`));
    }
  }
  if (!(await sandbox.files.exists(`${APP_DIR}/${BACKEND_CONFIG_FILE}`))) {
    await sandbox.files.write(`${APP_DIR}/${BACKEND_CONFIG_FILE}`, templateFile(BACKEND_CONFIG_FILE));
  }
  await sandbox.files.remove(legacyConfig);
  return touched;
}

/** Root layouts reading the legacy variable read `EXPO_PUBLIC_CONVEX_URL` instead. Paths touched. */
async function renameLayoutReads(sandbox: Sandbox): Promise<string[]> {
  const touched: string[] = [];
  for (const candidate of ROOT_LAYOUT_CANDIDATES) {
    const path = `${APP_DIR}/${candidate}`;
    if (!(await sandbox.files.exists(path))) continue;
    const source = await sandbox.files.read(path);
    if (!source.includes(LEGACY_NAMES.urlVariable)) continue;
    const renamed = renameEnvReads(source, candidate, LEGACY_NAMES.urlVariable, BACKEND_URL_VARIABLE);
    if (!renamed.changed) continue;
    await sandbox.files.write(path, renamed.code);
    touched.push(candidate);
  }
  return touched;
}

/** The legacy variable's value in `.env.local` moves to the real one (the file is never committed). */
async function renameEnvFileVariable(sandbox: Sandbox): Promise<boolean> {
  if (!(await sandbox.files.exists(DEFAULT_ENV_FILE))) return false;
  const assignment = new RegExp(`^\\s*(?:export\\s+)?${LEGACY_NAMES.urlVariable}\\s*=\\s*"?([^"\\s]+)"?\\s*$`, "m");
  const value = assignment.exec(await sandbox.files.read(DEFAULT_ENV_FILE))?.[1];
  if (!value) return false;
  await writeBackendUrlToEnvFile(sandbox, value);
  return true;
}

/**
 * Migrates an app enabled by an earlier version of the service, which wrote the spec's placeholder
 * names: renames `backend.json`/`backend/` when they are ours, rewrites the layout's
 * `process.env.APP_PUBLIC_BACKEND_URL` reads and the `.env.local` variable, and commits the
 * renamed paths (only those) in one commit. Idempotent: an app with the real names is untouched.
 * Returns whether anything changed (the app dev server must then re-bundle).
 */
export async function migrateLegacyBackendNames(sandbox: Sandbox): Promise<boolean> {
  const touched = [...(await renameFunctionsFolder(sandbox)), ...(await renameLayoutReads(sandbox))];
  const envChanged = await renameEnvFileVariable(sandbox);
  if (touched.length > 0) await commitPaths(sandbox, touched, MIGRATION_COMMIT);
  return touched.length > 0 || envChanged;
}
