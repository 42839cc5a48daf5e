import { log } from "@/lib/log";
import {
  ERROR_EVENT,
  buildErrorNotification,
  errorChannel,
  getRealtime,
  publishWithRetry,
  type ErrorNotificationSource,
  type ErrorNotificationType,
  type Realtime,
} from "@/lib/realtime";
import { createLogScanner, type LogScannerStats } from "./scanner";

export interface ErrorReporterOptions {
  projectId: string;
  /** The process whose output is fed in. */
  source: ErrorNotificationSource;
  /**
   * Where notifications go.
   * @default getRealtime(), resolved at the first error
   */
  realtime?: Realtime;
  /** @default 500 */
  groupDelayMs?: number;
  /** Wait before the one retry of a failed publish. @default 500 */
  retryDelayMs?: number;
}

export interface ErrorReporter {
  /** Feeds raw output (a sandbox command's onStdout/onStderr data); never throws. */
  write(chunk: string): void;
  /** Sends the pending error group now and resolves once every notification is published. */
  flush(): Promise<void>;
  /** Flushes and stops scanning (the process exited or its output stream is gone). */
  close(): Promise<void>;
  readonly stats: Readonly<LogScannerStats>;
}

/** Markers of compile-time failures: esbuild, TypeScript, the backend CLI's typecheck, Metro. */
const BUILD_ERROR = /\u2718 \[ERROR\]|\berror TS[0-9]+:|\besbuild failed\b|\btypecheck via `tsc` failed|\bbundling failed\b/i;

/** `build-error` for compile failures; otherwise the kind of error the source produces. */
export function classifyError(message: string, source: ErrorNotificationSource): ErrorNotificationType {
  if (BUILD_ERROR.test(message)) return "build-error";
  return source === "app-dev" ? "runtime-error" : "backend-error";
}

/**
 * Wires a process's output to the error scanner and the project's realtime error channel.
 * Notifications are published one after another, in the order the errors appeared; a failed
 * publish is retried once and logged, and never reaches the caller.
 */
export function createErrorReporter(options: ErrorReporterOptions): ErrorReporter {
  const { projectId, source } = options;
  const channel = errorChannel(projectId);
  let realtime = options.realtime;
  let queue: Promise<void> = Promise.resolve();

  async function publish(message: string): Promise<void> {
    try {
      realtime ??= getRealtime();
      const payload = buildErrorNotification({ message, projectId, source, type: classifyError(message, source) });
      await publishWithRetry(realtime, channel, ERROR_EVENT, payload, { retryDelayMs: options.retryDelayMs });
    } catch (error) {
      log.error("error notification not sent", { projectId, source, error });
    }
  }

  const scanner = createLogScanner({
    groupDelayMs: options.groupDelayMs,
    onError: (message) => {
      queue = queue.then(() => publish(message));
    },
  });

  return {
    write: (chunk) => scanner.write(chunk),
    async flush() {
      scanner.flush();
      await queue;
    },
    async close() {
      scanner.close();
      await queue;
    },
    get stats() {
      return scanner.stats;
    },
  };
}
