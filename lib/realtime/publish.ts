import { log } from "@/lib/log";
import { isTransientRealtimeError } from "./errors";
import type { Realtime } from "./port";

export interface PublishWithRetryOptions {
  /**
   * Wait before the one retry of a transient failure.
   * @default 500
   */
  retryDelayMs?: number;
}

/**
 * Publishes without ever throwing, for callers such as the log scanner that must keep running:
 * a transient failure is retried once, and a failure that remains is logged.
 * @returns whether the event was delivered
 */
export async function publishWithRetry(
  realtime: Realtime,
  channel: string,
  event: string,
  payload: unknown,
  options: PublishWithRetryOptions = {},
): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await realtime.publish(channel, event, payload);
      return true;
    } catch (error) {
      if (attempt === 2 || !isTransientRealtimeError(error)) {
        log.error("realtime publish failed", { driver: realtime.name, channel, event, attempt, error });
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 500));
    }
  }
}
