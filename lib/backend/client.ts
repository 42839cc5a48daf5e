import { createDeploymentClient, createManagementClient } from "@convex-dev/platform";
import { z } from "zod";
import { log } from "@/lib/log";
import { secretVariants } from "./admin-key";
import { BackendApiError, BackendNetworkError, BackendTimeoutError, backendErrorFromResponse } from "./errors";
import type { DeploymentTarget } from "./types";

/** Hosted management API host (spec 5.2 default). */
export const DEFAULT_PROVISION_HOST = "https://api.convex.dev";
/** Hosted dashboard host, where the OAuth consent page lives. */
export const DEFAULT_DASHBOARD_HOST = "https://dashboard.convex.dev";
/** Default timeout of one call, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Sent as `Convex-Client` so the platform can tell integrations apart. */
const CLIENT_NAME = "cloud-backend-service-0.1.0";

/** Options every backend call accepts. Nothing is read from globals: tests point calls anywhere. */
export interface BackendRequestOptions {
  /**
   * fetch implementation. Resolved at call time, so interceptors installed later (msw) apply.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
  /**
   * Time allowed for one HTTP call, answer body included, in milliseconds.
   * @default 30000
   */
  timeoutMs?: number;
  /** Cancels the call; the abort reason is rethrown as is. */
  signal?: AbortSignal;
}

/** Options of calls to the management API (`/v1/...`, `/oauth/token`). */
export interface ManagementApiOptions extends BackendRequestOptions {
  /**
   * Management API host, without a trailing slash.
   * @default "https://api.convex.dev"
   */
  provisionHost?: string;
}

/** One form POST built by hand: the OAuth token exchange, which is standard OAuth 2.0, not part of the v1 API. */
export interface FormCall {
  /** Verb phrase naming the call in errors and logs ("exchange the OAuth code"). */
  operation: string;
  url: string;
  /** `application/x-www-form-urlencoded` body. */
  form: Record<string, string>;
  /** Secret values this call sends; they are scrubbed from any upstream text put into an error. */
  secrets: readonly string[];
}

/** Joins a host (with or without trailing slash) and an absolute path. */
export function joinUrl(host: string, path: string): string {
  return host.replace(/\/+$/, "") + path;
}

function parseBody(text: string): unknown {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** What one HTTP exchange yielded: the status and the parsed body (JSON, text, or null when empty). */
interface Exchange {
  status: number;
  body: unknown;
}

/** The fetch a call uses, and the signal that carries its timeout and the caller's abort. */
export type CallTransport = {
  fetch: (request: Request) => Promise<Response>;
  signal: AbortSignal;
};

/**
 * Runs one backend call: `exchange` does the HTTP part with the given transport. Non-2xx answers
 * become typed errors through {@link backendErrorFromResponse}; a timeout becomes
 * {@link BackendTimeoutError} and a connection failure {@link BackendNetworkError}.
 */
async function runCall(
  call: { operation: string; secrets: readonly string[] },
  options: BackendRequestOptions,
  exchange: (transport: CallTransport) => Promise<Exchange>,
): Promise<unknown> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const forwardAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  const started = performance.now();
  let answer: Exchange;
  let sent: Request | undefined;
  const send = (request: Request) => {
    sent = request;
    return fetchImpl(request);
  };
  try {
    options.signal?.throwIfAborted();
    answer = await exchange({ fetch: send, signal: controller.signal });
  } catch (error) {
    if (timedOut) throw new BackendTimeoutError(call.operation, timeoutMs);
    if (options.signal?.aborted) throw options.signal.reason;
    throw new BackendNetworkError(call.operation, error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", forwardAbort);
  }
  const url = sent && new URL(sent.url);
  log.debug("backend call", {
    operation: call.operation,
    method: sent?.method,
    url: url && url.origin + url.pathname,
    status: answer.status,
    durationMs: Math.round(performance.now() - started),
  });
  if (answer.status < 200 || answer.status >= 300) {
    throw backendErrorFromResponse({ operation: call.operation, status: answer.status, body: answer.body, secrets: call.secrets });
  }
  return answer.body;
}

/** Posts a form and returns the parsed JSON body (null when empty). */
export function postForm(call: FormCall, options: BackendRequestOptions = {}): Promise<unknown> {
  const headers = { accept: "application/json", "convex-client": CLIENT_NAME, "content-type": "application/x-www-form-urlencoded" };
  const body = new URLSearchParams(call.form).toString();
  return runCall(call, options, async (transport) => {
    const response = await transport.fetch(new Request(call.url, { method: "POST", headers, body, signal: transport.signal, redirect: "manual" }));
    return { status: response.status, body: parseBody(await response.text()) };
  });
}

/** What an openapi-fetch call of `@convex-dev/platform` resolves to. */
interface PlatformAnswer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * One call through a `@convex-dev/platform` client. `send` passes the transport to the client
 * (`{...transport}` as request options); the answer's data is returned, errors are mapped as in
 * {@link postForm}. `secrets` are the token or key the client sends and any secret in the body.
 */
async function callPlatform<T>(
  call: { operation: string; secrets: readonly string[] },
  options: BackendRequestOptions,
  send: (transport: CallTransport) => Promise<PlatformAnswer<T>>,
): Promise<T> {
  const body = await runCall(call, options, async (transport) => {
    const answer = await send(transport);
    return { status: answer.response.status, body: answer.error ?? answer.data ?? null };
  });
  return body as T;
}

export type ManagementClient = ReturnType<typeof createManagementClient>;
export type DeploymentClient = ReturnType<typeof createDeploymentClient>;

/**
 * One v1 management call with the bearer token: `send` gets the `@convex-dev/platform` client
 * and the request options to pass it (the configured host's `/v1` base URL and our transport).
 */
export function callManagement<T>(
  call: { operation: string; bearerToken: string },
  options: ManagementApiOptions,
  send: (client: ManagementClient, init: CallTransport & { baseUrl: string }) => Promise<PlatformAnswer<T>>,
): Promise<T> {
  const client = createManagementClient(call.bearerToken);
  const baseUrl = joinUrl(options.provisionHost ?? DEFAULT_PROVISION_HOST, "/v1");
  return callPlatform({ operation: call.operation, secrets: secretVariants(call.bearerToken) }, options, (transport) => send(client, { ...transport, baseUrl }));
}

/** One v1 deployment-API call (`<deploymentUrl>/api/v1/...`) with `Authorization: Convex <key>`; `secrets` are secret values in the body. */
export function callDeployment<T>(
  call: { operation: string; target: DeploymentTarget; secrets?: readonly string[] },
  options: BackendRequestOptions,
  send: (client: DeploymentClient, init: CallTransport) => Promise<PlatformAnswer<T>>,
): Promise<T> {
  const client = createDeploymentClient(call.target.deploymentUrl.replace(/\/+$/, ""), call.target.token);
  const secrets = [...secretVariants(call.target.token), ...(call.secrets ?? [])];
  return callPlatform({ operation: call.operation, secrets }, options, (transport) => send(client, transport));
}

/**
 * Validates a success body against the private wire schema of an operation. A shape we do not
 * understand is an upstream failure, reported without echoing the body (it may hold secrets).
 */
export function parseWire<S extends z.ZodType>(schema: S, body: unknown, operation: string): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const fields = [...new Set(result.error.issues.map((issue) => issue.path.join(".") || "(body)"))].join(", ");
    throw new BackendApiError(`Failed to ${operation}: unexpected answer from the backend (fields: ${fields}).`, { operation }, 502, "backend_bad_response");
  }
  return result.data;
}
