import { log } from "@/lib/log";
import { isErrorOf } from "@/lib/errors";
import { BackendApiError } from "./errors";

/** Retry policy of the `*WithRetries` operations. */
export interface RetryOptions {
  /**
   * Attempts in all, the first included (the count Chef and the spec's source use).
   * @default 3
   */
  maxRetries?: number;
  /**
   * Pause before the second attempt, in milliseconds.
   * @default 500
   */
  retryDelay?: number;
  /**
   * Each further pause is the previous one times this factor (1: fixed pauses, 2: exponential backoff).
   * @default 1
   */
  backoffFactor?: number;
  /** Stops waiting and retrying; the abort reason is thrown. */
  signal?: AbortSignal;
}

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAY_MS = 500;

/**
 * True for transient failures only: network errors, timeouts, 5xx (the deployment's
 * `OptimisticConcurrencyControlFailure` is a 503) and 429. Other 4xx and our own bugs are final.
 */
export function isRetryableBackendError(error: unknown): boolean {
  return isErrorOf(error, BackendApiError) && error.retryable;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Runs `attempt` until it succeeds, fails for good, or `maxRetries` attempts are used; rethrows the last error. */
export async function withRetries<T>(operation: string, attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const maxAttempts = Math.max(1, Math.floor(options.maxRetries ?? DEFAULT_MAX_RETRIES));
  const delay = Math.max(0, options.retryDelay ?? DEFAULT_RETRY_DELAY_MS);
  const factor = Math.max(1, options.backoffFactor ?? 1);
  for (let number = 1; ; number++) {
    try {
      return await attempt();
    } catch (error) {
      if (number >= maxAttempts || !isRetryableBackendError(error)) throw error;
      const failure = error as BackendApiError;
      log.warn("backend call failed, retrying", {
        operation,
        attempt: number,
        maxAttempts,
        code: failure.code,
        upstreamStatus: failure.upstreamStatus,
        upstreamCode: failure.upstreamCode,
      });
      await pause(delay * factor ** (number - 1), options.signal);
    }
  }
}
