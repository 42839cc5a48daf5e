import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { startRunnerProcess } from "./runner-process";
import type { DocumentWrite, PushedModule } from "./store";

/**
 * Pushed modules on disk and their analysis by a runner (`function-runner.mjs`, behind the wall of runner-process.ts). Each push gets a
 * directory of its own, `<root>/<deployment>/<push id>/`, holding the modules at the paths the CLI gave them, so
 * their relative imports (`./_deps/…`) resolve as they did when the CLI bundled them.
 */

/** How long loading a push's modules may take before the push is refused (a module that loops at import). */
export const ANALYSE_TIMEOUT_MS = 20_000;

/** The hash the CLI compares to decide whether a module changed (`hash()` in the CLI's components.ts). */
export function moduleHash(module: { source: string; sourceMap?: string }): string {
  return crypto.createHash("sha256").update(module.source).update(module.sourceMap ?? "").digest("hex");
}

/** A module path the CLI sends, kept inside the push directory. */
function safeModulePath(modulePath: string): string {
  const normalized = path.posix.normalize(modulePath);
  if (normalized.startsWith("../") || path.posix.isAbsolute(normalized) || !/\.(?:js|mjs|cjs)$/.test(normalized)) {
    throw new Error(`Module path ${modulePath.slice(0, 200)} is not a relative .js path.`);
  }
  return normalized;
}

/** The directory of a push's modules: `<root>/<deployment>/<push id>`. */
export function pushDirectory(root: string, deploymentName: string, pushId: string): string {
  return path.join(root, deploymentName, pushId);
}

/** Writes a push's modules to its directory (again after a restart: they are kept in the store) and returns the directory. */
export async function writePushModules(dir: string, modules: readonly PushedModule[]): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  // Bundled modules are ES modules whatever their extension says.
  await fs.writeFile(path.join(dir, "package.json"), '{ "type": "module" }\n');
  for (const pushedModule of modules) {
    const file = path.join(dir, safeModulePath(pushedModule.path));
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, pushedModule.source);
    // The bundle names its map (`//# sourceMappingURL=<file>.map`): stack traces point at the app's sources.
    if (pushedModule.sourceMap) await fs.writeFile(`${file}.map`, pushedModule.sourceMap);
  }
  return dir;
}

/** Removes the module directories of a deployment's other pushes (replaced, refused or dry runs). */
export async function removeOtherPushDirectories(root: string, deploymentName: string, keepPushId: string | null): Promise<void> {
  const parent = path.join(root, deploymentName);
  const entries = await fs.readdir(parent).catch(() => [] as string[]);
  await Promise.all(entries.filter((entry) => entry !== keepPushId).map((entry) => fs.rm(path.join(parent, entry), { recursive: true, force: true })));
}

export interface AnalysedFunction {
  name: string;
  pos: null;
  udfType: "Query" | "Mutation" | "Action";
  visibility: { kind: "public" | "internal" } | null;
  args: string | null;
  returns: string | null;
}

export interface AnalysedModule {
  functions: AnalysedFunction[];
  httpRoutes: { path: string; method: string }[] | null;
  cronSpecs: unknown[] | null;
  sourceMapped: null;
}

export interface PushAnalysis {
  modules: Record<string, AnalysedModule>;
  schema: unknown;
  auth: unknown[];
  /** The first stored document the schema refuses. */
  documentsProblem: { tableName: string; error: string } | null;
}

/** Why a push's code could not be loaded: which file, and the exception as the backend words it. */
export type AnalysisFailure = { ok: false; kind: "module" | "schema" | "auth" | "timeout"; path: string; message: string };

export interface AnalyseInput {
  dir: string;
  modulePaths: string[];
  schemaPath: string | null;
  authPath: string | null;
  /** process.env of the pushed code: the deployment's variables plus its URLs. */
  env: Record<string, string>;
  /** The deployment's documents, checked against the pushed schema. */
  documents: DocumentWrite[];
}

/** Loads a push's modules in a fresh runner with a time and memory limit and reports what they define. */
export async function analysePush(input: AnalyseInput, timeoutMs = ANALYSE_TIMEOUT_MS): Promise<{ ok: true; value: PushAnalysis } | AnalysisFailure> {
  const { env, dir, ...rest } = input;
  const runner = await startRunnerProcess({ dir, env, init: { mode: "analyse", ...rest } });
  // The runner names each file before loading it, so a file that never finishes loading is known.
  let loading = input.modulePaths[0] ?? "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      resolve({ ok: false, kind: "timeout", path: loading, message: `The module did not finish loading within ${timeoutMs / 1000} s; does it loop at import?` });
      runner.kill();
    }, timeoutMs);
    runner.child.on("message", (message: { type: "loading"; path: string } | { type: "analysis"; result: { ok: true; value: PushAnalysis } | AnalysisFailure }) => {
      if (message.type === "loading") {
        loading = message.path;
        return;
      }
      clearTimeout(timer);
      resolve(message.result);
      runner.kill();
    });
    runner.child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    runner.child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const reason = runner.stderrTail().split("\n").slice(-3).join("\n") || `exit code ${code}, signal ${signal}`;
      resolve({ ok: false, kind: "module", path: loading, message: `The runtime loading the modules stopped before answering (${reason}).` });
    });
  });
}
