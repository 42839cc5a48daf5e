import { getConfig } from "@/lib/config";
import { getBackendTemplateFiles, injectBackendWrapper, InjectionError } from "@/lib/injection";
import { log } from "@/lib/log";
import { APP_DIR, restartAppDevServer, type Sandbox } from "@/lib/sandbox";
import { startBackendDevServer } from "./backend-dev-server";
import { BACKEND_URL_VARIABLE, updateSandboxEnvFile } from "./env-file";

const LAYOUT_CANDIDATES = ["app/_layout.tsx", "app/_layout.jsx", "app/_layout.js"];

/** Warnings are shown to the user on the connected state; they never carry secrets. */
export type Warnings = string[];

/**
 * Spec 4.1 steps 1–2: creates the `backend/` template files that are missing (an existing file
 * is the user's code and is kept) and injects `BackendWrapper` into the root layout. A layout the
 * injector cannot safely edit is left untouched and reported as a warning: the backend still works.
 */
export async function injectBackendIntoSandbox(sandbox: Sandbox): Promise<Warnings> {
  const missing = [];
  for (const file of getBackendTemplateFiles()) {
    const target = `${APP_DIR}/${file.path}`;
    if (!(await sandbox.files.exists(target))) missing.push({ path: target, data: file.content });
  }
  if (missing.length > 0) await sandbox.files.write(missing);

  for (const candidate of LAYOUT_CANDIDATES) {
    const layoutPath = `${APP_DIR}/${candidate}`;
    if (!(await sandbox.files.exists(layoutPath))) continue;
    try {
      const result = injectBackendWrapper(await sandbox.files.read(layoutPath), candidate);
      if (result.changed) await sandbox.files.write(layoutPath, result.code);
      return [];
    } catch (error) {
      if (!(error instanceof InjectionError)) throw error;
      return [`BackendWrapper was not added to ${candidate}: ${error.message}`];
    }
  }
  return ["No app/_layout.tsx found; wrap your root component in BackendWrapper by hand."];
}

async function commitChanges(sandbox: Sandbox): Promise<void> {
  const message = `Enable ${getConfig().BACKEND_PRODUCT_NAME} cloud backend`;
  await sandbox.commands.run(
    `git add -A && (git diff --cached --quiet || git -c user.name="Cloud backend" -c user.email="cloud-backend@localhost" commit -q -m ${JSON.stringify(message)})`,
    { cwd: APP_DIR, timeoutMs: 60_000 },
  );
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
 * reads the variable, and starts the backend dev server. Those three are independent once the
 * env file is written, so they run side by side; each is non-fatal and reported as a warning.
 */
export async function finishSandboxSetup(
  sandbox: Sandbox,
  projectId: string,
  backend: { deploymentUrl: string; adminKey: string },
): Promise<Warnings> {
  await updateSandboxEnvFile(sandbox, BACKEND_URL_VARIABLE, backend.deploymentUrl);
  const outcomes = await Promise.all([
    nonFatal("Committing the changes", () => commitChanges(sandbox)),
    nonFatal("Restarting the app dev server", () => restartAppDevServer(sandbox)),
    nonFatal("Starting the backend dev server", () => startBackendDevServer(sandbox, projectId, backend)),
  ]);
  return outcomes.flat();
}
