import { AppError, isErrorOf } from "@/lib/errors";

/** Base of every realtime failure; the HTTP layer maps it like any `AppError`. */
export class RealtimeError extends AppError {}

/** Thrown when the selected driver lacks required settings. */
export class RealtimeNotConfiguredError extends RealtimeError {
  constructor(message: string) {
    super(503, "realtime_not_configured", message);
  }
}

/** Thrown when a channel or event name breaks the naming rules shared with Pusher. */
export class RealtimeInvalidNameError extends RealtimeError {
  constructor(message: string) {
    super(400, "realtime_invalid_name", message);
  }
}

/** Thrown when an event's data is over the size limit (Pusher answers 413 and drops it). */
export class RealtimePayloadTooLargeError extends RealtimeError {
  constructor(readonly size: number, readonly limit: number) {
    super(413, "realtime_payload_too_large", `The realtime event data is ${size} bytes; the limit is ${limit}.`);
  }
}

/** Thrown when the messaging service does not answer within the request timeout. */
export class RealtimeTimeoutError extends RealtimeError {
  constructor(readonly timeoutMs: number, options?: { cause?: unknown }) {
    super(504, "realtime_timeout", `The realtime service did not answer within ${timeoutMs} ms.`, options);
  }
}

/** Thrown when the messaging service refuses or fails a publish; `upstreamStatus` when it answered. */
export class RealtimePublishError extends RealtimeError {
  constructor(readonly upstreamStatus: number | undefined, message: string, options?: { cause?: unknown }) {
    super(502, "realtime_publish_failed", message, options);
  }
}

/** Whether a failed publish may succeed when tried again (network trouble, 5xx, 429). */
export function isTransientRealtimeError(error: unknown): boolean {
  if (isErrorOf(error, RealtimeTimeoutError)) return true;
  if (isErrorOf(error, RealtimePublishError)) {
    const status = error.upstreamStatus;
    return status === undefined || status >= 500 || status === 429;
  }
  return false;
}
