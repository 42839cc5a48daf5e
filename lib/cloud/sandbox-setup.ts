import { parseEnv } from "node:util";
import { BACKEND_PACKAGE, BACKEND_URL_VARIABLE, ROOT_LAYOUT_CANDIDATES } from "@/lib/app-names";
import { getBackendTemplateFiles, injectBackendWrapper, InjectionError } from "@/lib/injection";
import { log } from "@/lib/log";
import { restartAppDevServer } from "@/lib/dev-servers";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import { hasGeneratedApi, startBackendDevServer, untilGeneratedApi } from "./backend-dev-server";
import { ensureBackendPackage } from "./backend-package";
import { DEFAULT_ENV_FILE, writeBackendUrlToEnvFile } from "./env-file";
import { commitAll } from "./git";
import { migrateLegacyBackendNames } from "./legacy-names";

/** Warnings are shown to the user on the connected state; they never carry secrets. */
export type Warnings = string[];

/** The template files the sandbox lacks, as writes. */
async function missingTemplateFiles(sandbox: Sandbox): Promise<{ path: string; data: string }[]> {
  const missing = [];
  for (const file of getBackendTemplateFiles()) {
    const target = `${APP_DIR}/${file.path}`;
    if (!(await sandbox.files.exists(target))) missing.push({ path: target, data: file.content });
  }
  return missing;
}

/** Creates the template files that are missing; an existing file is the user's code and is kept. */
async function writeMissingTemplateFiles(sandbox: Sandbox): Promise<void> {
  const missing = await missingTemplateFiles(sandbox);
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

/** How long the app dev server's restart waits for the backend's first codegen (the CLI's start and a push, on a loaded machine). */
const GENERATED_API_WAIT_MS = 120_000;

/**
 * Starts the backend dev server and restarts the app dev server. Metro's file watcher misses
 * files created while it starts (it crawls first, then watches), so an app without
 * `convex/_generated` yet would never resolve `../convex/_generated/api`: there, Metro restarts
 * once the backend dev server generated it, as Convex's own order has it (`npx convex dev`, then
 * `npx expo start`). An app that has it restarts both at once.
 */
async function startDevServers(sandbox: Sandbox, projectId: string, backend: { deploymentUrl: string; adminKey: string }): Promise<Warnings> {
  const generated = await hasGeneratedApi(sandbox);
  const startingBackend = nonFatal("Starting the backend dev server", () => startBackendDevServer(sandbox, projectId, backend));
  if (!generated) await startingBackend.then(() => untilGeneratedApi(sandbox, GENERATED_API_WAIT_MS));
  const appWarnings = await nonFatal("Restarting the app dev server", () => restartAppDevServer(sandbox));
  return [...(await startingBackend), ...appWarnings];
}

/**
 * Spec 4.1 steps 5–8 for a provisioned backend: writes the URL into `.env.local` (fatal when it
 * fails: the app could not reach its backend), then commits, restarts the app dev server so it
 * inlines the variable, and starts the backend dev server. The commit and the dev servers are
 * independent once the env file is written, so they run side by side; each is non-fatal and
 * reported as a warning.
 */
export async function finishSandboxSetup(
  sandbox: Sandbox,
  projectId: string,
  backend: { deploymentUrl: string; adminKey: string },
): Promise<Warnings> {
  await writeBackendUrlToEnvFile(sandbox, backend.deploymentUrl);
  const outcomes = await Promise.all([nonFatal("Committing the changes", () => commitAll(sandbox)), startDevServers(sandbox, projectId, backend)]);
  return outcomes.flat();
}

/** A piece of the sandbox wiring enable sets up (spec 4.1 steps 1, 2, 5 and the dependency). */
export type SandboxWiringStep = "backend_files" | "layout_wrapper" | "backend_package" | "backend_url";

async function layoutNeedsWrapper(sandbox: Sandbox): Promise<boolean> {
  const layout = await findRootLayout(sandbox);
  if (!layout) return false;
  try {
    return injectBackendWrapper(await sandbox.files.read(`${APP_DIR}/${layout}`), layout).changed;
  } catch (error) {
    // A layout the injector cannot edit stays a warning of the first enable, not a missing step.
    if (error instanceof InjectionError) return false;
    throw error;
  }
}

async function declaresBackendPackage(sandbox: Sandbox): Promise<boolean> {
  try {
    const manifest = JSON.parse(await sandbox.files.read(`${APP_DIR}/package.json`)) as Record<string, Record<string, string> | undefined>;
    return Boolean(manifest.dependencies?.[BACKEND_PACKAGE] ?? manifest.devDependencies?.[BACKEND_PACKAGE]);
  } catch {
    // Unreadable JSON: the package step reports it as a warning.
    return false;
  }
}

async function envFilePointsAt(sandbox: Sandbox, deploymentUrl: string): Promise<boolean> {
  if (!(await sandbox.files.exists(DEFAULT_ENV_FILE))) return false;
  return parseEnv(await sandbox.files.read(DEFAULT_ENV_FILE))[BACKEND_URL_VARIABLE] === deploymentUrl;
}

/** Which pieces of a connected project's sandbox wiring are missing (e.g. after managed connect, which skips the sandbox). */
export async function missingSandboxWiring(sandbox: Sandbox, deploymentUrl: string): Promise<SandboxWiringStep[]> {
  const checks: [SandboxWiringStep, () => Promise<boolean>][] = [
    ["backend_files", async () => (await missingTemplateFiles(sandbox)).length > 0],
    ["layout_wrapper", () => layoutNeedsWrapper(sandbox)],
    ["backend_package", async () => !(await declaresBackendPackage(sandbox))],
    ["backend_url", async () => !(await envFilePointsAt(sandbox, deploymentUrl))],
  ];
  const missing: SandboxWiringStep[] = [];
  for (const [step, isMissing] of checks) if (await isMissing()) missing.push(step);
  return missing;
}

/**
 * Finishes the sandbox steps of a connected project whose sandbox lacks (part of) the wiring: the
 * same idempotent steps as a first enable, run only when something is missing. Returns what was
 * missing (now set up) and the steps' warnings; nothing when the wiring is complete.
 */
export async function completeSandboxWiring(
  sandbox: Sandbox,
  projectId: string,
  backend: { deploymentUrl: string; adminKey: string },
): Promise<{ completed: SandboxWiringStep[]; warnings: Warnings }> {
  const completed = await missingSandboxWiring(sandbox, backend.deploymentUrl);
  if (completed.length === 0) return { completed, warnings: [] };
  const warnings = [...(await injectBackendIntoSandbox(sandbox)), ...(await finishSandboxSetup(sandbox, projectId, backend))];
  return { completed, warnings };
}
