import { getConfig, type Config } from "@/lib/config";
import { log } from "@/lib/log";
import { getStore, type Sql } from "@/lib/store";
import type { EmulatorContext } from "./context";
import { runQuery, updateEnvironmentVariables } from "./deployment";
import { FaultController, applyFault, faultRuleSchema, type FaultRule } from "./faults";
import { EmulatorError, errorBody, readJson, secretsEqual } from "./http";
import { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH, getEmulatorIdentity, type EmulatorIdentity } from "./identity";
import { createProject, deleteProjectById, provisionAndAuthorize } from "./management";
import { exchangeToken, grantConsent, showConsent } from "./oauth";
import { upsertTeam, type EmulatorTeam } from "./store";

export { createEmulatorTeam } from "./store";
export { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH, getEmulatorIdentity, type EmulatorIdentity } from "./identity";
export type { FaultRule } from "./faults";

/**
 * HTTP emulator of the backend's management API, OAuth dashboard/token endpoints and deployment
 * env-var API, persisted in the product's store. Every path is below {@link EMULATOR_MOUNT_PATH};
 * deployments live at `<mount>/deployments/<name>`, so they resolve on loopback.
 */

export interface EmulatorOptions {
  /** The store. @default the process store (getStore()) */
  db?: Sql;
  /** Source of the secrets key (built-in credentials) and defaults. @default getConfig() */
  config?: Config;
  /** Projects per team. @default config.EMULATOR_PROJECT_QUOTA (20) */
  projectQuota?: number;
  /** Public URL of the mount used in deployment URLs. @default the request's origin + "/emulator" */
  publicBaseUrl?: string;
  /** Clock for OAuth code expiry. @default () => new Date() */
  now?: () => Date;
}

export interface Emulator {
  /** Answers one request addressed below the mount path. */
  handle(request: Request): Promise<Response>;
  /** Queued fault rules; in-process shortcut for `POST <mount>/_admin/faults`. */
  readonly faults: FaultController;
  /** Built-in credentials (secrets: keep them out of logs). */
  readonly identity: EmulatorIdentity;
}

/** Header carrying one fault rule (JSON) for this request only; needs the admin secret. */
export const FAULT_HEADER = "x-emulator-fault";
/** Header carrying the emulator admin secret. */
export const ADMIN_SECRET_HEADER = "x-emulator-admin-secret";

type Handler = (request: Request, context: EmulatorContext, ...params: string[]) => Promise<Response>;

const DEPLOYMENT = "/deployments/([a-z0-9-]+)/api";
const ROUTES: { method: string; pattern: RegExp; handler: Handler }[] = [
  { method: "POST", pattern: /^\/api\/create_project$/, handler: createProject },
  { method: "POST", pattern: /^\/api\/deployment\/provision_and_authorize$/, handler: provisionAndAuthorize },
  { method: "POST", pattern: /^\/v1\/projects\/([^/]+)\/delete$/, handler: deleteProjectById },
  { method: "POST", pattern: /^\/oauth\/token$/, handler: exchangeToken },
  { method: "GET", pattern: new RegExp(`^${EMULATOR_DASHBOARD_PREFIX}/oauth/authorize/team$`), handler: showConsent },
  { method: "POST", pattern: new RegExp(`^${EMULATOR_DASHBOARD_PREFIX}/oauth/authorize/team$`), handler: grantConsent },
  { method: "POST", pattern: new RegExp(`^${DEPLOYMENT}(?:/v1)?/update_environment_variables$`), handler: updateEnvironmentVariables },
  { method: "POST", pattern: new RegExp(`^${DEPLOYMENT}/query$`), handler: runQuery },
];

/** Creates an emulator; several can share one store (tests run one per server). */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const config = options.config ?? getConfig();
  const identity = getEmulatorIdentity(config);
  const faults = new FaultController();
  let builtInTeam: Promise<EmulatorTeam> | undefined;

  async function contextFor(url: URL): Promise<EmulatorContext> {
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
      baseUrl: options.publicBaseUrl ?? url.origin + EMULATOR_MOUNT_PATH,
    };
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

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (!url.pathname.startsWith(`${EMULATOR_MOUNT_PATH}/`)) return errorBody(404, "NotFound", "Not an emulator path.");
    const path = url.pathname.slice(EMULATOR_MOUNT_PATH.length);
    try {
      if (path.startsWith("/_admin/")) return await administer(request, path);
      const fault = headerFault(request) ?? faults.take(path);
      const injected = fault && (await applyFault(fault, request.signal));
      if (injected) return injected;
      const candidates = ROUTES.filter((route) => route.pattern.test(path));
      const route = candidates.find((candidate) => candidate.method === request.method);
      if (!route) {
        return candidates.length > 0
          ? errorBody(405, "MethodNotAllowed", `${request.method} is not allowed here.`)
          : errorBody(404, "NotFound", `No emulated endpoint at ${path}.`);
      }
      const params = route.pattern.exec(path)!.slice(1);
      return await route.handler(request, await contextFor(url), ...params);
    } catch (error) {
      if (error instanceof EmulatorError) return errorBody(error.status, error.code, error.message);
      log.error("emulator request failed", { path, error });
      return errorBody(500, "InternalServerError", "Your request couldn't be completed. Try again later.");
    }
  }

  return { handle, faults, identity };
}

const holder = globalThis as typeof globalThis & { __emulator?: { config: Config; emulator: Emulator } };

/** The emulator of this installation (store + config of the process); rebuilt when the config is reloaded. */
export function getDefaultEmulator(): Emulator {
  const config = getConfig();
  if (holder.__emulator?.config !== config) {
    holder.__emulator = { config, emulator: createEmulator({ config, publicBaseUrl: config.PUBLIC_BASE_URL + EMULATOR_MOUNT_PATH }) };
  }
  return holder.__emulator.emulator;
}

/** Answers a request with the installation's emulator (mounted at /emulator when BACKEND_PROVIDER=local). */
export function handleEmulatorRequest(request: Request): Promise<Response> {
  return getDefaultEmulator().handle(request);
}
