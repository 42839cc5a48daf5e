import { AppError } from "@/lib/errors";
import { redactSecrets } from "@/lib/log/redact";

/** Longest upstream message carried into one of our error messages. */
const MAX_UPSTREAM_MESSAGE = 300;

interface BackendErrorDetails {
  /** What we were doing, e.g. "create project"; starts every message. */
  operation: string;
  /** HTTP status the backend answered; undefined for network failures and timeouts. */
  upstreamStatus?: number;
  /** The backend's error code, e.g. `ProjectQuotaReached`. */
  upstreamCode?: string;
  cause?: unknown;
}

/**
 * Base of every failure of a management or deployment API call. The message is safe to show and
 * log: it never contains a token, key or secret. As an AppError it maps to `{error:{code,message}}`
 * with our own status (502 unless a subclass says otherwise), never the upstream one.
 */
export class BackendApiError extends AppError {
  readonly operation: string;
  readonly upstreamStatus?: number;
  readonly upstreamCode?: string;

  constructor(message: string, details: BackendErrorDetails, status = 502, code = "backend_api_error") {
    super(status, code, message, { cause: details.cause });
    this.operation = details.operation;
    this.upstreamStatus = details.upstreamStatus;
    this.upstreamCode = details.upstreamCode;
  }

  /** Transient failures worth another attempt: 5xx (incl. `OptimisticConcurrencyControlFailure`) and 429. */
  get retryable(): boolean {
    return this.upstreamStatus !== undefined && (this.upstreamStatus >= 500 || this.upstreamStatus === 429);
  }
}

/** Thrown when a call did not complete within its timeout. */
export class BackendTimeoutError extends BackendApiError {
  constructor(operation: string, timeoutMs: number) {
    super(`Failed to ${operation}: the backend did not answer within ${timeoutMs} ms.`, { operation }, 504, "backend_timeout");
  }

  override get retryable(): boolean {
    return true;
  }
}

/** Thrown when the backend could not be reached at all (DNS, refused or reset connection). */
export class BackendNetworkError extends BackendApiError {
  constructor(operation: string, cause: unknown) {
    super(`Failed to ${operation}: the backend could not be reached (${describeNetworkFailure(cause)}).`, { operation, cause }, 502, "backend_unreachable");
  }

  override get retryable(): boolean {
    return true;
  }
}

/** Thrown when the team has no project left on its plan (`ProjectQuotaReached`). */
export class ProjectQuotaReachedError extends BackendApiError {
  constructor(details: BackendErrorDetails, upstreamMessage: string) {
    super(
      `Failed to ${details.operation}: ProjectQuotaReached: the backend team has reached its plan's project limit. ` +
        "Delete unused projects or upgrade the plan." +
        (upstreamMessage ? ` (${upstreamMessage})` : ""),
      details,
      409,
      "project_quota_reached",
    );
  }
}

/** Thrown when the team only accepts members signed in with Single Sign-On (`SSORequired`). */
export class BackendSsoRequiredError extends BackendApiError {
  constructor(details: BackendErrorDetails) {
    super(
      `Failed to ${details.operation}: SSORequired: this backend team requires Single Sign-On; log in with SSO and reconnect.`,
      details,
      502,
      "backend_sso_required",
    );
  }
}

/** Thrown when the backend rejects the credentials (401/403): an invalid, revoked or foreign token or key. */
export class BackendAuthError extends BackendApiError {
  constructor(details: BackendErrorDetails, upstreamMessage: string) {
    super(
      `Failed to ${details.operation}: the backend rejected the credentials (${details.upstreamStatus}` +
        `${details.upstreamCode ? ` ${details.upstreamCode}` : ""}). Check the configured token or reconnect.` +
        (upstreamMessage ? ` (${upstreamMessage})` : ""),
      details,
      502,
      "backend_auth_failed",
    );
  }
}

/** Thrown when the backend says the target (project, deployment, team) does not exist. */
export class BackendNotFoundError extends BackendApiError {
  constructor(details: BackendErrorDetails, upstreamMessage: string) {
    super(
      `Failed to ${details.operation}: not found (${details.upstreamCode ?? "404"})` + (upstreamMessage ? `: ${upstreamMessage}` : "."),
      details,
      502,
      "backend_not_found",
    );
  }
}

/**
 * Removes this call's secrets (and anything shaped like a key or token) from upstream text, then
 * shortens it, so an echoing or hostile server cannot smuggle a secret into our messages.
 */
export function scrubUpstreamText(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join("[REDACTED]");
  result = redactSecrets(result).replace(/\s+/g, " ").trim();
  return result.length > MAX_UPSTREAM_MESSAGE ? `${result.slice(0, MAX_UPSTREAM_MESSAGE)}…` : result;
}

/** Reads `{code, message}`, OAuth's `{error, error_description}` or a UDF `{status:"error", errorMessage}` body. */
function readErrorBody(body: unknown): { code?: string; message: string } {
  if (typeof body === "string") return { message: body };
  if (!body || typeof body !== "object") return { message: "" };
  const record = body as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    code: text(record.code) ?? text(record.error),
    message: text(record.message) ?? text(record.error_description) ?? text(record.errorMessage) ?? "",
  };
}

/**
 * The one mapper from a non-2xx backend answer to a typed error. `secrets` are the values this
 * call sent (tokens, keys, client secret, code); none of them can end up in the message.
 */
export function backendErrorFromResponse(input: {
  operation: string;
  status: number;
  body: unknown;
  secrets: readonly string[];
}): BackendApiError {
  const { code, message: rawMessage } = readErrorBody(input.body);
  const upstreamMessage = scrubUpstreamText(rawMessage, input.secrets);
  const upstreamCode = code ? scrubUpstreamText(code, input.secrets) : undefined;
  const details: BackendErrorDetails = { operation: input.operation, upstreamStatus: input.status, upstreamCode };
  // Some proxies answer SSO failures as plain text, hence the message check.
  if (upstreamCode === "SSORequired" || (!upstreamCode && upstreamMessage.includes("SSORequired"))) {
    return new BackendSsoRequiredError({ ...details, upstreamCode: "SSORequired" });
  }
  if (upstreamCode === "ProjectQuotaReached") return new ProjectQuotaReachedError(details, upstreamMessage);
  switch (input.status) {
    case 401:
    case 403:
      return new BackendAuthError(details, upstreamMessage);
    case 404:
      return new BackendNotFoundError(details, upstreamMessage);
    default:
      return new BackendApiError(
        `Failed to ${input.operation}: the backend answered ${input.status}` +
          `${upstreamCode ? ` ${upstreamCode}` : ""}${upstreamMessage ? `: ${upstreamMessage}` : "."}`,
        details,
      );
  }
}

/** A short, secret-free description of a fetch failure: the system error code when there is one. */
function describeNetworkFailure(cause: unknown): string {
  const inner = (cause as { cause?: { code?: unknown } } | undefined)?.cause;
  if (inner && typeof inner.code === "string") return inner.code;
  return cause instanceof Error ? cause.name : "unknown error";
}
