import { redactSecrets } from "@/lib/log";
import {
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  SandboxError,
  SandboxNotFoundError,
  SandboxTimeoutError,
} from "../errors";

/** What the failing call was about, so "not found" can name a file or a sandbox. */
export interface E2BCallContext {
  path?: string;
  sandboxId?: string;
}

type ErrorFactory = (error: Error & Record<string, unknown>, context: E2BCallContext) => Error;

const notFound: ErrorFactory = (_error, context) =>
  context.path !== undefined ? new FileNotFoundError(context.path) : new SandboxNotFoundError(context.sandboxId ?? "(unknown)");

/**
 * SDK error class names (the SDK sets `name` on every class) to the port's errors. By name
 * rather than `instanceof`, so it holds whichever copy of the lazily imported SDK threw.
 * `NotFoundError` is the deprecated parent older `^2` versions throw for both cases.
 */
const E2B_ERROR_MAP: Record<string, ErrorFactory> = {
  CommandExitError: (error) =>
    new CommandExitError({
      exitCode: Number(error.exitCode),
      ...(typeof error.error === "string" ? { error: error.error } : {}),
      stdout: String(error.stdout ?? ""),
      stderr: String(error.stderr ?? ""),
    }),
  TimeoutError: (error) => new SandboxTimeoutError(`E2B: ${redactSecrets(error.message)}`),
  FileNotFoundError: notFound,
  SandboxNotFoundError: (_error, context) => new SandboxNotFoundError(context.sandboxId ?? "(unknown)"),
  NotFoundError: notFound,
  InvalidArgumentError: (error) => new InvalidArgumentError(`E2B: ${redactSecrets(error.message)}`),
};

/**
 * The SDK could not reach the service at all (refused, reset, busy): its REST and file calls throw
 * undici's `TypeError: fetch failed`, its RPC calls a SandboxError wrapping Connect's
 * `[unknown] fetch failed` or `[unavailable]`, a 503 a ServiceBusyError.
 */
const isUnreachable = (error: Error): boolean =>
  (error.name === "TypeError" && error.message === "fetch failed") ||
  error.name === "ServiceBusyError" ||
  (error.name === "SandboxError" && /\[(unknown\] fetch failed|unavailable\])/.test(error.message));

/** Maps anything the E2B SDK throws to the port's error hierarchy. */
export function fromE2BError(error: unknown, context: E2BCallContext = {}): Error {
  if (error instanceof SandboxError) return error;
  if (!(error instanceof Error)) return new SandboxError(`E2B failed: ${redactSecrets(String(error))}`);
  if (isUnreachable(error)) {
    return new SandboxError(`The sandbox service is unavailable: ${redactSecrets(error.message)}`, {
      status: 503,
      code: "sandbox_unavailable",
      cause: error,
    });
  }
  const factory = E2B_ERROR_MAP[error.name];
  if (factory) return factory(error as Error & Record<string, unknown>, context);
  return new SandboxError(`E2B failed: ${redactSecrets(error.message)}`, { cause: error });
}

/** Runs an SDK call and rethrows its failure as a port error. */
export async function callE2B<T>(operation: () => Promise<T>, context: E2BCallContext = {}): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw fromE2BError(error, context);
  }
}
