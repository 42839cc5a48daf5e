import { EventEmitter } from "node:events";
import path from "node:path";
import { getBlobStore, type BlobStore } from "@/lib/blob";
import { getConfig, type Config } from "@/lib/config";
import { log } from "@/lib/log";
import { getStore, type Sql } from "@/lib/store";
import { deriveKey } from "@/lib/secrets";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import type { EmulatorContext } from "./context";
import {
  deploymentInfo,
  getCanonicalUrls,
  keyOpensDeployment,
  listEnvironmentVariables,
  pauseDeployment,
  unpauseDeployment,
  updateEnvironmentVariables,
} from "./deployment";
import { teamAndProjectForKey, urlForKey } from "./deploy-key-lookup";
import { FaultController, applyFault, faultRuleSchema, type FaultRule } from "./faults";
import { EmulatorError, errorBody, readJson, secretsEqual } from "./http";
import { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH, getEmulatorIdentity, type EmulatorIdentity } from "./identity";
import { DeploymentListeners } from "./listeners";
import {
  createDeployKey,
  createDeployment,
  createProject,
  deleteDeploymentByName,
  deleteProjectById,
  getDeployment,
  getProjectById,
  getProjectBySlug,
  getProjectDeployment,
  getProjectDeploymentBySlug,
  listDeploymentClasses,
  listDeploymentRegions,
  listDefaultEnvironmentVariables,
  listProjectDeployments,
  listTeamDeploymentsPage,
  listTeamProjects,
  tokenDetails,
  updateDefaultEnvironmentVariables,
} from "./management";
import { NOT_LOCAL_DEPLOYMENT_ROUTES, NOT_LOCAL_MANAGEMENT_ROUTES } from "./not-local";
import { exchangeToken, grantConsent, showConsent } from "./oauth";
import { encryptPlaintextEnvVars, findDeployment, listDeploymentsWithPendingJobs, upsertTeam, type EmulatorDeployment, type EmulatorTeam } from "./store";
import { ANALYSE_TIMEOUT_MS } from "./modules";
import { allowCors, runAction, runAnyFunction, runByUrl, runFunction, runMutation, runQuery, serveHttpAction, streamFunctionLogs, verifiedIdentity } from "./functions-api";
import { PUSH_MODULES_DIR, evaluatePush, evaluateSchema, finishPushRequest, getConfigHashes, reportPushCompleted, startPush, waitForSchema } from "./push";
import { FunctionRuntimes, type FunctionKind } from "./runtime";
import { DeploymentFiles, allowUploadCors, serveFile, uploadFile } from "./storage";
import { SnapshotBlobs } from "./snapshot-blobs";
import { downloadExport, requestExport } from "./snapshot-export";
import { confirmImport, finishImportUpload, startImportUpload, uploadImportPart } from "./snapshot-import";
import { syncUpgradeHandler } from "./sync";

export { createEmulatorTeam, type EmulatorTeam } from "./store";
export { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH, getEmulatorIdentity, type EmulatorIdentity } from "./identity";
export type { FaultRule } from "./faults";

/**
 * HTTP emulator of the backend's documented v1 management API, OAuth dashboard/token endpoints
 * and deployment API, persisted in the product's store. Management paths are below
 * {@link EMULATOR_MOUNT_PATH}; each deployment listens at the root of its own loopback port.
 */

export interface EmulatorOptions {
  /** The store. @default the process store (getStore()) */
  db?: Sql;
  /** Source of the secrets key (built-in credentials) and defaults. @default getConfig() */
  config?: Config;
  /** Projects per team. @default config.EMULATOR_PROJECT_QUOTA (20) */
  projectQuota?: number;
  /** Clock for OAuth code expiry. @default () => new Date() */
  now?: () => Date;
  /** How long loading a push's modules may take. @default ANALYSE_TIMEOUT_MS */
  analyseTimeoutMs?: number;
  /** Longest run of a function call, per kind. @default FUNCTION_TIMEOUT_MS */
  functionTimeoutMs?: Record<FunctionKind, number>;
  /** Where deployments' files are kept. @default the process blob store (getBlobStore()) */
  blobs?: BlobStore;
  /** Called after every answered request with both sides of the exchange (contract tests). */
  onExchange?: (exchange: EmulatorExchange) => void;
}

/** One request and its answer, as the emulator saw them. */
export interface EmulatorExchange {
  /** Which API answered: the management mount or a deployment's listener. */
  api: "management" | "deployment";
  method: string;
  /** Below the mount (management) or from the deployment's root. */
  path: string;
  query: URLSearchParams;
  requestBody: string;
  status: number;
  responseBody: string;
}

export interface Emulator {
  /** Answers one request addressed below the mount path (management API, OAuth, admin). */
  handle(request: Request): Promise<Response>;
  /** Server start: creates the built-in team if needed and reopens the listeners of the stored deployments. */
  start(): Promise<{ team: EmulatorTeam; deployments: number }>;
  /** Closes every deployment listener this emulator opened. */
  close(): Promise<void>;
  /** Queued fault rules (management and deployment requests); in-process shortcut for `POST <mount>/_admin/faults`. */
  readonly faults: FaultController;
  /** Built-in credentials (secrets: keep them out of logs). */
  readonly identity: EmulatorIdentity;
}

/** Header carrying one fault rule (JSON) for this request only; needs the admin secret. */
export const FAULT_HEADER = "x-emulator-fault";
/** Header carrying the emulator admin secret. */
export const ADMIN_SECRET_HEADER = "x-emulator-admin-secret";

type Route<P> = { method: string; pattern: RegExp; handler: (request: Request, context: EmulatorContext, ...params: P[]) => Promise<Response> };

const SEGMENT = "([^/]+)";
const MANAGEMENT_ROUTES: Route<string>[] = [
  { method: "GET", pattern: /^\/v1\/token_details$/, handler: tokenDetails },
  { method: "POST", pattern: new RegExp(`^/v1/teams/${SEGMENT}/create_project$`), handler: createProject },
  { method: "GET", pattern: new RegExp(`^/v1/teams/${SEGMENT}/projects$`), handler: listTeamProjects },
  { method: "GET", pattern: new RegExp(`^/v1/teams/${SEGMENT}/projects/${SEGMENT}$`), handler: getProjectBySlug },
  { method: "GET", pattern: new RegExp(`^/v1/projects/${SEGMENT}$`), handler: getProjectById },
  { method: "GET", pattern: new RegExp(`^/v1/projects/${SEGMENT}/list_deployments$`), handler: listProjectDeployments },
  { method: "GET", pattern: new RegExp(`^/v1/projects/${SEGMENT}/deployment$`), handler: getProjectDeployment },
  { method: "GET", pattern: new RegExp(`^/v1/teams/${SEGMENT}/projects/${SEGMENT}/deployment$`), handler: getProjectDeploymentBySlug },
  { method: "POST", pattern: new RegExp(`^/v1/deployments/${SEGMENT}/delete$`), handler: deleteDeploymentByName },
  { method: "GET", pattern: new RegExp(`^/v1/teams/${SEGMENT}/list_deployments$`), handler: listTeamDeploymentsPage },
  { method: "GET", pattern: new RegExp(`^/v1/teams/${SEGMENT}/list_deployment_classes$`), handler: listDeploymentClasses },
  { method: "GET", pattern: new RegExp(`^/v1/teams/${SEGMENT}/list_deployment_regions$`), handler: listDeploymentRegions },
  { method: "POST", pattern: new RegExp(`^/v1/projects/${SEGMENT}/create_deployment$`), handler: createDeployment },
  { method: "POST", pattern: new RegExp(`^/v1/projects/${SEGMENT}/delete$`), handler: deleteProjectById },
  { method: "GET", pattern: new RegExp(`^/v1/projects/${SEGMENT}/list_default_environment_variables$`), handler: listDefaultEnvironmentVariables },
  { method: "POST", pattern: new RegExp(`^/v1/projects/${SEGMENT}/update_default_environment_variables$`), handler: updateDefaultEnvironmentVariables },
  { method: "GET", pattern: new RegExp(`^/v1/deployments/${SEGMENT}$`), handler: getDeployment },
  { method: "POST", pattern: new RegExp(`^/v1/deployments/${SEGMENT}/create_deploy_key$`), handler: createDeployKey },
  { method: "POST", pattern: /^\/api\/deployment\/url_for_key$/, handler: urlForKey },
  { method: "POST", pattern: /^\/api\/deployment\/team_and_project_for_key$/, handler: teamAndProjectForKey },
  { method: "POST", pattern: /^\/oauth\/token$/, handler: exchangeToken },
  { method: "GET", pattern: new RegExp(`^${EMULATOR_DASHBOARD_PREFIX}/oauth/authorize/team$`), handler: showConsent },
  { method: "POST", pattern: new RegExp(`^${EMULATOR_DASHBOARD_PREFIX}/oauth/authorize/team$`), handler: grantConsent },
  ...NOT_LOCAL_MANAGEMENT_ROUTES,
];

/** Paths at a deployment's root: the v1 deployment API plus the unversioned ones the CLI calls. */
const DEPLOYMENT_ROUTES: Route<EmulatorDeployment>[] = [
  { method: "POST", pattern: /^\/api(?:\/v1)?\/update_environment_variables$/, handler: updateEnvironmentVariables },
  { method: "GET", pattern: /^\/api(?:\/v1)?\/list_environment_variables$/, handler: listEnvironmentVariables },
  { method: "GET", pattern: /^\/api\/v1\/get_canonical_urls$/, handler: getCanonicalUrls },
  { method: "GET", pattern: /^\/api\/v1\/deployment_info$/, handler: deploymentInfo },
  { method: "POST", pattern: /^\/api\/v1\/pause_deployment$/, handler: pauseDeployment },
  { method: "POST", pattern: /^\/api\/v1\/unpause_deployment$/, handler: unpauseDeployment },
  { method: "POST", pattern: /^\/api\/query$/, handler: runQuery },
  { method: "POST", pattern: /^\/api\/mutation$/, handler: runMutation },
  { method: "POST", pattern: /^\/api\/action$/, handler: runAction },
  { method: "POST", pattern: /^\/api\/run\/.+$/, handler: runByUrl },
  { method: "POST", pattern: /^\/api\/function$/, handler: runAnyFunction },
  { method: "GET", pattern: /^\/api\/stream_function_logs$/, handler: streamFunctionLogs },
  { method: "POST", pattern: /^\/api\/storage\/upload$/, handler: uploadFile },
  { method: "OPTIONS", pattern: /^\/api\/storage\/upload$/, handler: allowUploadCors },
  { method: "GET", pattern: /^\/api\/storage\/(?!upload$)[^/]+$/, handler: serveFile },
  { method: "HEAD", pattern: /^\/api\/storage\/(?!upload$)[^/]+$/, handler: serveFile },
  { method: "OPTIONS", pattern: /^\/api\/(?:query|mutation|action|function|run\/.+)$/, handler: allowCors },
  { method: "POST", pattern: /^\/api\/export\/request\/zip$/, handler: requestExport },
  { method: "GET", pattern: /^\/api\/export\/zip\/[^/]+$/, handler: downloadExport },
  { method: "POST", pattern: /^\/api\/import\/start_upload$/, handler: startImportUpload },
  { method: "POST", pattern: /^\/api\/import\/upload_part$/, handler: uploadImportPart },
  { method: "POST", pattern: /^\/api\/import\/finish_upload$/, handler: finishImportUpload },
  { method: "POST", pattern: /^\/api\/perform_import$/, handler: confirmImport },
  { method: "POST", pattern: /^\/api\/get_config_hashes$/, handler: getConfigHashes },
  { method: "POST", pattern: /^\/api\/deploy2\/start_push$/, handler: startPush },
  { method: "POST", pattern: /^\/api\/deploy2\/evaluate_push$/, handler: evaluatePush },
  { method: "POST", pattern: /^\/api\/deploy2\/evaluate_schema$/, handler: evaluateSchema },
  { method: "POST", pattern: /^\/api\/deploy2\/wait_for_schema$/, handler: waitForSchema },
  { method: "POST", pattern: /^\/api\/deploy2\/finish_push$/, handler: finishPushRequest },
  { method: "POST", pattern: /^\/api\/deploy2\/report_push_completed$/, handler: reportPushCompleted },
  ...NOT_LOCAL_DEPLOYMENT_ROUTES,
];

/** The route for this method and path: the matching route, or the error answer (404 unknown path, 405 wrong method). */
function findRoute<P>(routes: Route<P>[], method: string, path: string): { route: Route<P>; params: string[] } | Response {
  const candidates = routes.filter((route) => route.pattern.test(path));
  const route = candidates.find((candidate) => candidate.method === method);
  if (!route) {
    return candidates.length > 0
      ? errorBody(405, "MethodNotAllowed", `${method} is not allowed here.`)
      : errorBody(404, "NotFound", `No emulated endpoint at ${path.slice(0, 200)}.`);
  }
  return { route, params: route.pattern.exec(path)!.slice(1).map(decodeURIComponent) };
}

/** Creates an emulator; several can share one store (tests run one per server). */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const config = options.config ?? getConfig();
  const identity = getEmulatorIdentity(config);
  const faults = new FaultController();
  const listeners = new DeploymentListeners((name) => ({
    handle: (request) => handleDeployment(name, request),
    upgrade: syncUpgradeHandler({
      authorize: async (key) => {
        const { context, deployment } = await deploymentContext(name);
        return keyOpensDeployment(context, key, deployment);
      },
      verify: async (token) => {
        const { context, deployment } = await deploymentContext(name);
        return verifiedIdentity(context, deployment, token);
      },
      run: async (request) => {
        const { context, deployment } = await deploymentContext(name);
        return runFunction(context, deployment, request);
      },
      subscribe: (listener) => {
        commits.on(name, listener);
        return () => commits.off(name, listener);
      },
    }),
  }), config.EMULATOR_PORT_RANGE);
  // Deployment name → its commits, for the sync sessions that re-run their queries.
  const commits = new EventEmitter().setMaxListeners(0);
  const runtimes = new FunctionRuntimes(options.functionTimeoutMs, (deploymentName) => commits.emit(deploymentName));
  const files = new DeploymentFiles(() => options.blobs ?? getBlobStore(), deriveKey("emulator:storage-paths:v1", config));
  const snapshots = new SnapshotBlobs(() => options.blobs ?? getBlobStore(), deriveKey("emulator:snapshot-paths:v1", config));
  let builtInTeam: Promise<EmulatorTeam> | undefined;

  async function context(): Promise<EmulatorContext> {
    const db = options.db ?? (await getStore());
    if (!builtInTeam) {
      builtInTeam = upsertTeam(db, { slug: identity.teamSlug, token: identity.teamToken });
      builtInTeam.catch(() => (builtInTeam = undefined));
    }
    return {
      db,
      identity,
      builtInTeam: await builtInTeam,
      projectQuota: options.projectQuota ?? config.EMULATOR_PROJECT_QUOTA,
      now: options.now ?? (() => new Date()),
      listeners,
      modulesDir: path.join(config.DATA_DIR, PUSH_MODULES_DIR),
      analyseTimeoutMs: options.analyseTimeoutMs ?? ANALYSE_TIMEOUT_MS,
      runtimes,
      files,
      snapshots,
    };
  }

  /** The deployment a listener serves; a deleted project's listener answers 404 until it is closed. */
  async function deploymentContext(name: string): Promise<{ context: EmulatorContext; deployment: EmulatorDeployment }> {
    const current = await context();
    const deployment = await findDeployment(current.db, { name });
    if (!deployment) throw new EmulatorError(404, "DeploymentNotFound", `The requested deployment ${name} does not exist`);
    return { context: current, deployment };
  }

  /** Starts a deployment's worker, which schedules its pending functions again; a failure is logged (the next call retries). */
  async function startScheduledFunctions(name: string): Promise<void> {
    try {
      const { context: current, deployment } = await deploymentContext(name);
      const push = await runtimes.livePush(current, name);
      if (push) await runtimes.runner(current, deployment, push);
    } catch (error) {
      log.warn("scheduled functions not started", { deployment: name, error });
    }
  }

  function requireAdmin(request: Request): void {
    const secret = request.headers.get(ADMIN_SECRET_HEADER);
    if (!secret || !secretsEqual(secret, identity.adminSecret)) {
      throw new EmulatorError(403, "EmulatorAdminRequired", `Fault injection needs the emulator admin secret in ${ADMIN_SECRET_HEADER}.`);
    }
  }

  function headerFault(request: Request): FaultRule | undefined {
    const header = request.headers.get(FAULT_HEADER);
    if (!header) return undefined;
    requireAdmin(request);
    let parsed: unknown;
    try {
      parsed = JSON.parse(header);
    } catch {
      throw new EmulatorError(400, "BadFaultHeader", `${FAULT_HEADER} must be a JSON fault rule.`);
    }
    const rule = faultRuleSchema.safeParse(parsed);
    if (!rule.success) throw new EmulatorError(400, "BadFaultHeader", `${FAULT_HEADER} is not a valid fault rule.`);
    return rule.data;
  }

  async function administer(request: Request, path: string): Promise<Response> {
    requireAdmin(request);
    if (request.method === "POST" && path === "/_admin/faults") {
      faults.add(await readJson(request, faultRuleSchema));
      return new Response(null, { status: 204 });
    }
    if (request.method === "POST" && path === "/_admin/faults/clear") {
      faults.clear();
      return new Response(null, { status: 204 });
    }
    throw new EmulatorError(404, "NotFound", "Unknown admin endpoint.");
  }

  /** A queued or per-request fault's answer, else the handler's. */
  async function withFaults(api: EmulatorExchange["api"], request: Request, path: string, run: () => Promise<Response>): Promise<Response> {
    const fault = headerFault(request) ?? faults.take(path, api);
    const injected = fault && (await applyFault(fault, request.signal));
    return injected || run();
  }

  /** {@link respond}, reporting the exchange to `options.onExchange`. */
  async function answer(api: EmulatorExchange["api"], request: Request, path: string, run: () => Promise<Response>): Promise<Response> {
    if (!options.onExchange) return respond(request, path, run);
    const copy = request.clone();
    const response = await respond(request, path, run);
    options.onExchange({
      api,
      method: request.method,
      path,
      query: new URL(request.url).searchParams,
      requestBody: await copy.text(),
      status: response.status,
      responseBody: await response.clone().text(),
    });
    return response;
  }

  /** Runs the handler; emulator errors become `{code, message}` answers. */
  async function respond(request: Request, path: string, run: () => Promise<Response>): Promise<Response> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof EmulatorError) return errorBody(error.status, error.code, error.message);
      log.error("emulator request failed", { path, error });
      return errorBody(500, "InternalServerError", "Your request couldn't be completed. Try again later.");
    }
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (!url.pathname.startsWith(`${EMULATOR_MOUNT_PATH}/`)) return errorBody(404, "NotFound", "Not an emulator path.");
    const path = url.pathname.slice(EMULATOR_MOUNT_PATH.length);
    if (path.startsWith("/_admin/")) return answer("management", request, path, () => administer(request, path));
    return answer("management", request, path, () =>
      withFaults("management", request, path, async () => {
        const found = findRoute(MANAGEMENT_ROUTES, request.method, path);
        return found instanceof Response ? found : found.route.handler(request, await context(), ...found.params);
      }),
    );
  }

  function handleDeployment(name: string, request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    return answer("deployment", request, path, () =>
      withFaults("deployment", request, path, async () => {
        const found = findRoute(DEPLOYMENT_ROUTES, request.method, path);
        const { context: current, deployment } = await deploymentContext(name);
        if (found instanceof Response) return (!path.startsWith("/api/") && (await serveHttpAction(request, current, deployment))) || found;
        return found.route.handler(request, current, deployment);
      }),
    );
  }

  return {
    handle,
    start: async () => {
      const current = await context();
      const encrypted = await encryptPlaintextEnvVars(current.db);
      if (encrypted > 0) log.info("emulator environment variables stored in plain text were encrypted", { count: encrypted });
      const deployments = await listeners.restore(current.db);
      await Promise.all((await listDeploymentsWithPendingJobs(current.db)).map(startScheduledFunctions));
      return { team: current.builtInTeam, deployments };
    },
    close: async () => {
      await Promise.all([listeners.close(), runtimes.close()]);
    },
    faults,
    identity,
  };
}

/** The emulator of this installation (store + config of the process); rebuilt (and the old one closed) when the config is reloaded. */
export function getDefaultEmulator(): Emulator {
  const config = getConfig();
  const current = processSingleton("emulator", () => ({ config, emulator: createEmulator({ config }) }), {
    close: ({ emulator }) => emulator.close(),
  });
  if (current.config === config) return current.emulator;
  void resetProcessSingleton("emulator");
  return getDefaultEmulator();
}

/** Answers a request with the installation's emulator (mounted at /emulator when BACKEND_PROVIDER=local). */
export function handleEmulatorRequest(request: Request): Promise<Response> {
  return getDefaultEmulator().handle(request);
}
