import crypto from "node:crypto";
import {
  backendProjectNameFor,
  createPkcePair,
  exchangeOAuthCode,
  getOAuthAuthorizeUrl,
  provisionBackendProject,
  teamSlugFromAccessToken,
} from "@/lib/backend";
import { getConfig, type Config } from "@/lib/config";
import { AppError, BadRequestError, ConflictError, isAppError, NotConfiguredError, NotFoundError } from "@/lib/errors";
import { log } from "@/lib/log";
import { registerSecret } from "@/lib/log/redact";
import type { OpenProjectSandbox } from "@/lib/projects";
import { deriveKey, getSecretBox } from "@/lib/secrets";
import { getStore, type Sql, type SqlExecutor } from "@/lib/store";
import { insertOAuthState, oauthStateExists, takeOAuthState } from "@/lib/store/oauth-states";
import { getOwnedProject, type Project } from "@/lib/store/projects";
import { getBackendSettings, type BackendSettings } from "./backend-settings";
import { sandboxSteps } from "./enable";
import { runProvisioning } from "./provisioning-run";
import { checkLayoutBeforeEnable } from "./sandbox-setup";

/**
 * OAuth mode (spec 1.2, 5.3): the user authorizes our OAuth app on their own backend team, and
 * the project is provisioned there with their access token through the same provisioning run
 * and sandbox steps as enable.
 */

/** How long a `state` (and so a started connect) stays usable. */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;
/** Path of the callback route; with PUBLIC_BASE_URL it is the registered redirect URI. */
export const OAUTH_CALLBACK_PATH = "/backend/callback";

/** Thrown when a callback's `state` was not issued by us to this caller, expired or was used. */
export class InvalidOAuthStateError extends BadRequestError {
  constructor(message: string) {
    super(`${message} Start connecting again from the project page.`, "invalid_oauth_state");
  }
}

export interface OAuthStateOptions {
  /** Clock. @default () => new Date() */
  now?: () => Date;
  /** Lifetime of an issued state. @default OAUTH_STATE_TTL_MS */
  ttlMs?: number;
}

// `<nonce>.<expiry ms, base 36>.<HMAC-SHA256>`, all base64url; 32-byte nonce and MAC → 43 chars.
const STATE_FORMAT = /^([A-Za-z0-9_-]{43})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/;

/** The MAC key, derived from the installation's secrets key so nothing new must be configured. */
function stateKey(config: Config): Buffer {
  return deriveKey("oauth-state:v1", config);
}

const mac = (payload: string) => crypto.createHmac("sha256", stateKey(getConfig())).update(payload).digest("base64url");
const nonceDigest = (nonce: string) => crypto.createHash("sha256").update(nonce).digest("hex");
const verifierContext = (nonceHash: string) => `oauth_states.code_verifier:${nonceHash}`;

/**
 * Issues a signed, expiring, single-use `state` bound to a user and a project. The PKCE verifier
 * stays server-side in the state's row (encrypted); only the nonce's digest is stored.
 */
export async function issueOAuthState(
  db: SqlExecutor,
  input: { userId: string; projectId: string; codeVerifier: string },
  options: OAuthStateOptions = {},
): Promise<string> {
  const now = options.now?.() ?? new Date();
  const expiresAt = new Date(now.getTime() + (options.ttlMs ?? OAUTH_STATE_TTL_MS));
  const nonce = crypto.randomBytes(32).toString("base64url");
  const nonceHash = nonceDigest(nonce);
  await insertOAuthState(
    db,
    { nonceHash, userId: input.userId, projectId: input.projectId, codeVerifier: getSecretBox().encrypt(input.codeVerifier, verifierContext(nonceHash)), expiresAt },
    now,
  );
  const payload = `${nonce}.${expiresAt.getTime().toString(36)}`;
  return `${payload}.${mac(payload)}`;
}

/**
 * Verifies and uses up a `state` for `userId`: the signature, the expiry, then an atomic delete
 * of its row (so of two concurrent callbacks only one gets it). A state of another user is left
 * in place for its owner. Throws {@link InvalidOAuthStateError} with the reason.
 */
export async function consumeOAuthState(
  db: SqlExecutor,
  state: string,
  userId: string,
  options: Pick<OAuthStateOptions, "now"> = {},
): Promise<{ projectId: string; codeVerifier: string }> {
  const match = STATE_FORMAT.exec(state);
  const expected = match && Buffer.from(mac(`${match[1]}.${match[2]}`));
  if (!match || !expected || !crypto.timingSafeEqual(expected, Buffer.from(match[3]))) {
    throw new InvalidOAuthStateError("The OAuth state is not one this service issued (malformed or altered).");
  }
  const now = options.now?.() ?? new Date();
  if (parseInt(match[2], 36) <= now.getTime()) throw new InvalidOAuthStateError("The OAuth state has expired.");
  const nonceHash = nonceDigest(match[1]);
  const taken = await takeOAuthState(db, nonceHash, userId, now);
  if (taken) return { projectId: taken.projectId, codeVerifier: getSecretBox().decrypt(taken.codeVerifier, verifierContext(nonceHash)) };
  throw new InvalidOAuthStateError(
    (await oauthStateExists(db, nonceHash)) ? "The OAuth state was issued to another user." : "The OAuth state was already used.",
  );
}

type OAuthSettings = BackendSettings & { oauthClientId: string; oauthClientSecret: string };

/** The OAuth app's credentials (the emulator's built-in app on the local provider). */
function requireOAuthSettings(): OAuthSettings {
  const settings = getBackendSettings(getConfig());
  if (!settings.oauthClientId || !settings.oauthClientSecret) {
    throw new NotConfiguredError(
      "Connecting your own backend account is not configured: set BACKEND_OAUTH_CLIENT_ID and BACKEND_OAUTH_CLIENT_SECRET.",
      "backend_oauth_not_configured",
    );
  }
  return settings as OAuthSettings;
}

/** The redirect URI registered with the OAuth app. */
export function oauthRedirectUri(config: Config = getConfig()): string {
  return config.PUBLIC_BASE_URL + OAUTH_CALLBACK_PATH;
}

/** A connected project keeps its backend until it is disconnected. */
function requireConnectable(project: Project): void {
  if (project.backendProject?.kind === "connected") {
    throw new ConflictError("The project is already connected to a backend; disconnect it first.", "already_connected");
  }
}

/**
 * GET /backend/connect: the consent URL on the dashboard host for this user and project, with
 * a fresh state and PKCE challenge.
 */
export async function startOAuthConnect(userId: string, project: Project, options: OAuthStateOptions = {}): Promise<string> {
  const settings = requireOAuthSettings();
  requireConnectable(project);
  const { codeVerifier, codeChallenge } = createPkcePair();
  const state = await issueOAuthState(await getStore(), { userId, projectId: project.id, codeVerifier }, options);
  return getOAuthAuthorizeUrl(
    { clientId: settings.oauthClientId, redirectUri: oauthRedirectUri(), state, codeChallenge },
    { dashboardHost: settings.dashboardHost },
  );
}

/** Query of the callback: `code` on success, `error` (e.g. `access_denied`) when the user declined. */
export interface OAuthCallbackParams {
  state: string;
  code?: string;
  error?: string;
}

/**
 * The project's dashboard page, with the outcome in the query: `backend=connected`, or
 * `backend_error=<code>&backend_error_message=<sentence>` (never a secret).
 */
export function projectDashboardUrl(projectId: string, failure?: { code: string; message: string }): string {
  const url = new URL(`${getConfig().PUBLIC_BASE_URL}/projects/${encodeURIComponent(projectId)}`);
  if (failure) {
    url.searchParams.set("backend_error", failure.code);
    url.searchParams.set("backend_error_message", failure.message);
  } else {
    url.searchParams.set("backend", "connected");
  }
  return url.toString();
}

/** What the user chose on the consent page, as a failure to show (the provider's text is not echoed). */
function declined(error: string | undefined): { code: string; message: string } {
  if (error === undefined) {
    return { code: "oauth_error", message: "The backend's consent page sent back no authorization code; the project was not connected." };
  }
  if (error === "access_denied") {
    return { code: "access_denied", message: "Access was denied on the backend's consent page; the project was not connected." };
  }
  const name = /^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : "unknown";
  return { code: "oauth_error", message: `The backend's consent page answered "${name}"; the project was not connected.` };
}

/** Exchanges the code and runs the OAuth provisioning plan: the enable flow with the user's token. */
async function connectWithCode(
  db: Sql,
  userId: string,
  projectId: string,
  grant: { code: string; codeVerifier: string },
  openSandbox: OpenProjectSandbox,
): Promise<void> {
  const project = await getOwnedProject(db, projectId, userId);
  if (!project) throw new NotFoundError("Project not found.", "project_not_found");
  requireConnectable(project);
  const settings = requireOAuthSettings();
  const sandbox = await openSandbox(project);
  // As in enable: a layout whose own Convex client cannot be kept stops the flow before anything is created.
  await checkLayoutBeforeEnable(sandbox);
  const token = await exchangeOAuthCode(
    { ...grant, clientId: settings.oauthClientId, clientSecret: settings.oauthClientSecret, redirectUri: oauthRedirectUri() },
    settings,
  );
  const accessToken = token.access_token;
  registerSecret(accessToken);
  const teamSlug = teamSlugFromAccessToken(accessToken);
  if (!teamSlug) {
    throw new AppError(502, "backend_token_not_team_scoped", "The backend granted access to a single project, not a team; authorize a team.");
  }
  await runProvisioning(db, {
    projectId,
    userId,
    kind: "oauth",
    mode: "oauth",
    accessToken,
    provision: (workflow) => provisionBackendProject({ accessToken, teamSlug, projectName: backendProjectNameFor(projectId) }, { ...settings, ...workflow }),
    ...sandboxSteps(sandbox, projectId),
  });
}

/**
 * GET /backend/callback: checks the state (throws {@link InvalidOAuthStateError}: nothing is
 * touched), then connects and returns the dashboard URL to redirect to. Every failure after a
 * valid state (declined consent, failed exchange or provisioning) is reported on that URL; a
 * failed provisioning is also recorded as the project's `failed` state.
 */
export async function completeOAuthConnect(
  userId: string,
  params: OAuthCallbackParams,
  openSandbox: OpenProjectSandbox,
  options: OAuthStateOptions = {},
): Promise<string> {
  const db = await getStore();
  const { projectId, codeVerifier } = await consumeOAuthState(db, params.state, userId, options);
  if (params.error !== undefined || params.code === undefined) return projectDashboardUrl(projectId, declined(params.error));
  try {
    await connectWithCode(db, userId, projectId, { code: params.code, codeVerifier }, openSandbox);
    return projectDashboardUrl(projectId);
  } catch (error) {
    if (isAppError(error)) return projectDashboardUrl(projectId, { code: error.code, message: error.message });
    log.error("OAuth connect failed", { projectId, error });
    return projectDashboardUrl(projectId, { code: "internal_error", message: "Connecting the backend failed on our side. Try again." });
  }
}
