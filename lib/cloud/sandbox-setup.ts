import { ROOT_LAYOUT_CANDIDATES } from "@/lib/app-names";
import { getBackendTemplateFiles, injectBackendWrapper, InjectionError } from "@/lib/injection";
import { log } from "@/lib/log";
import { APP_DIR, restartAppDevServer, type Sandbox } from "@/lib/sandbox";
import { startBackendDevServer } from "./backend-dev-server";
import { ensureBackendPackage } from "./backend-package";
import { writeBackendUrlToEnvFile } from "./env-file";
import { commitAll } from "./git";
import { migrateLegacyBackendNames } from "./legacy-names";

/** Warnings are shown to the user on the connected state; they never carry secrets. */
export type Warnings = string[];

/** Creates the template files that are missing; an existing file is the user's code and is kept. */
async function writeMissingTemplateFiles(sandbox: Sandbox): Promise<void> {
  const missing = [];
  for (const file of getBackendTemplateFiles()) {
    const target = `${APP_DIR}/${file.path}`;
    if (!(await sandbox.files.exists(target))) missing.push({ path: target, data: file.content });
  }
  if (missing.length > 0) await sandbox.files.write(missing);
}

/** The root layout's path relative to the app, or null when the app has none. */
async function findRootLayout(sandbox: Sandbox): Promise<string | null> {
  for (const candidate of ROOT_LAYOUT_CANDIDATES) {
    if (await sandbox.files.exists(`${APP_DIR}/${candidate}`)) return candidate;
  }
  return null;
}

/**
 * Refuses enable (ExistingProviderError, 409) before anything is provisioned or written when the
 * layout has its own Convex provider whose client cannot be pointed at the URL variable: the
 * injection runs concurrently with provisioning, too late to stop it. Other injection problems
 * are left to the injection, which reports them as warnings.
 */
export async function checkLayoutBeforeEnable(sandbox: Sandbox): Promise<void> {
  const layout = await findRootLayout(sandbox);
  if (!layout) return;
  try {
    injectBackendWrapper(await sandbox.files.read(`${APP_DIR}/${layout}`), layout);
  } catch (error) {
    if (!(error instanceof InjectionError)) throw error;
  }
}

/** Injects `BackendWrapper` into the root layout; a layout the injector cannot safely edit is left as is, with a warning. */
async function injectIntoLayout(sandbox: Sandbox): Promise<Warnings> {
  const layout = await findRootLayout(sandbox);
  if (!layout) return ["No app/_layout.tsx found; wrap your root component in BackendWrapper by hand."];
  const layoutPath = `${APP_DIR}/${layout}`;
  try {
    const result = injectBackendWrapper(await sandbox.files.read(layoutPath), layout);
    if (result.changed) await sandbox.files.write(layoutPath, result.code);
    // The app's own client was edited: the user should know which line changed.
    return result.note ? [result.note] : [];
  } catch (error) {
    if (!(error instanceof InjectionError)) throw error;
    return [`BackendWrapper was not added to ${layout}: ${error.message}`];
  }
}

/**
 * Spec 4.1 steps 1–2 plus the dependency: migrates names written by earlier versions, creates the
 * `convex/` template files, injects `BackendWrapper` into the root layout and adds and installs
 * the `convex` package. Needs no credentials, so it runs while the backend is provisioned.
 */
export async function injectBackendIntoSandbox(sandbox: Sandbox): Promise<Warnings> {
  await migrateLegacyBackendNames(sandbox);
  await writeMissingTemplateFiles(sandbox);
  const layoutWarnings = await injectIntoLayout(sandbox);
  return [...layoutWarnings, ...(await ensureBackendPackage(sandbox))];
}

/** Runs a step whose failure must not undo the connection; its failure becomes a warning. */
async function nonFatal(what: string, step: () => Promise<unknown>): Promise<Warnings> {
  try {
    const outcome = await step();
    return outcome === false ? [`${what} failed.`] : [];
  } catch (error) {
    log.warn(`${what} failed`, { error });
    return [`${what} failed: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * Spec 4.1 steps 5–8 for a provisioned backend: writes the URL into `.env.local` (fatal when it
 * fails: the app could not reach its backend), then commits, restarts the app dev server so it
 * inlines the variable, and starts the backend dev server. Those three are independent once the
 * env file is written, so they run side by side; each is non-fatal and reported as a warning.
 */
export async function finishSandboxSetup(
  sandbox: Sandbox,
  projectId: string,
  backend: { deploymentUrl: string; adminKey: string },
): Promise<Warnings> {
  await writeBackendUrlToEnvFile(sandbox, backend.deploymentUrl);
  const outcomes = await Promise.all([
    nonFatal("Committing the changes", () => commitAll(sandbox)),
    nonFatal("Restarting the app dev server", () => restartAppDevServer(sandbox)),
    nonFatal("Starting the backend dev server", () => startBackendDevServer(sandbox, projectId, backend)),
  ]);
  return outcomes.flat();
}
