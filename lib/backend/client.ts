import { z } from "zod";
import { log } from "@/lib/log";
import { secretVariants } from "./admin-key";
import { BackendApiError, BackendNetworkError, BackendTimeoutError, backendErrorFromResponse } from "./errors";

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

/** Options of calls to the management API (`/api/...`, `/v1/...`, `/oauth/token`). */
export interface ManagementApiOptions extends BackendRequestOptions {
  /**
   * Management API host, without a trailing slash.
   * @default "https://api.convex.dev"
   */
  provisionHost?: string;
}

/** One HTTP call to the backend. */
export interface BackendCall {
  /** Verb phrase naming the call in errors and logs ("create project"). */
  operation: string;
  method: "GET" | "POST";
  url: string;
  /** Full Authorization header value. */
  authorization?: string;
  /** JSON body. */
  json?: unknown;
  /** `application/x-www-form-urlencoded` body. */
  form?: Record<string, string>;
  /** Secret values this call sends; they are scrubbed from any upstream text put into an error. */
  secrets: readonly string[];
}

/** Joins a host (with or without trailing slash) and an absolute path. */
export function joinUrl(host: string, path: string): string {
  return host.replace(/\/+$/, "") + path;
}

function encodeBody(call: BackendCall): { body?: string; contentType?: string } {
  if (call.form) return { body: new URLSearchParams(call.form).toString(), contentType: "application/x-www-form-urlencoded" };
  if (call.json !== undefined) return { body: JSON.stringify(call.json), contentType: "application/json" };
  return {};
}

function parseBody(text: string): unknown {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Sends one call and returns its parsed JSON body (null when empty). Non-2xx answers become typed
 * errors through {@link backendErrorFromResponse}; a timeout becomes {@link BackendTimeoutError}
 * and a connection failure {@link BackendNetworkError}.
 */
export async function callBackend(call: BackendCall, options: BackendRequestOptions = {}): Promise<unknown> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const { body, contentType } = encodeBody(call);
  const headers: Record<string, string> = { accept: "application/json", "convex-client": CLIENT_NAME };
  if (contentType) headers["content-type"] = contentType;
  if (call.authorization) headers.authorization = call.authorization;

  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const forwardAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  const started = performance.now();
  let status: number;
  let text: string;
  try {
    options.signal?.throwIfAborted();
    const response = await fetchImpl(call.url, { method: call.method, headers, body, signal: controller.signal, redirect: "manual" });
    status = response.status;
    text = await response.text();
  } catch (error) {
    if (timedOut) throw new BackendTimeoutError(call.operation, timeoutMs);
    if (options.signal?.aborted) throw options.signal.reason;
    throw new BackendNetworkError(call.operation, error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", forwardAbort);
  }
  const url = new URL(call.url);
  log.debug("backend call", {
    operation: call.operation,
    method: call.method,
    url: url.origin + url.pathname,
    status,
    durationMs: Math.round(performance.now() - started),
  });
  const parsed = parseBody(text);
  if (status < 200 || status >= 300) {
    throw backendErrorFromResponse({ operation: call.operation, status, body: parsed, secrets: call.secrets });
  }
  return parsed;
}

/** One call to the management API: the path is resolved against `provisionHost`, a bearer token is sent as such. */
export function callManagementApi(
  call: Omit<BackendCall, "url" | "authorization" | "secrets"> & { path: string; bearerToken?: string; secrets?: readonly string[] },
  options: ManagementApiOptions = {},
): Promise<unknown> {
  const { path, bearerToken, secrets = [], ...rest } = call;
  return callBackend(
    {
      ...rest,
      url: joinUrl(options.provisionHost ?? DEFAULT_PROVISION_HOST, path),
      authorization: bearerToken === undefined ? undefined : `Bearer ${bearerToken}`,
      secrets: bearerToken === undefined ? secrets : [...secretVariants(bearerToken), ...secrets],
    },
    options,
  );
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
