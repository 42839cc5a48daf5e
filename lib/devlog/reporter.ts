import { log } from "@/lib/log";
import { buildErrorNotification, type ErrorNotificationSource, type ErrorNotificationType, type Realtime } from "@/lib/realtime";
import { sendErrorNotification } from "@/lib/realtime/error-notifications";
import type { SqlExecutor } from "@/lib/store";
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
  /**
   * Where notifications are kept (the project's error history).
   * @default getStore(), resolved at the first error
   */
  db?: SqlExecutor;
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
 * Wires a process's output to the error scanner and the project's error notifications (stored,
 * then published on its realtime error channel): one per error group, and a `resolved` one when
 * the dev server reports success after errors. They are sent one after another, in the order
 * they appeared; a failure is logged and never reaches the caller.
 */
export function createErrorReporter(options: ErrorReporterOptions): ErrorReporter {
  const { projectId, source } = options;
  let queue: Promise<void> = Promise.resolve();

  async function send(message: string, type: ErrorNotificationType): Promise<void> {
    try {
      const notification = buildErrorNotification({ message, projectId, source, type });
      await sendErrorNotification(notification, { db: options.db, realtime: options.realtime, retryDelayMs: options.retryDelayMs });
    } catch (error) {
      log.error("error notification not sent", { projectId, source, error });
    }
  }
  const enqueue = (message: string, type: ErrorNotificationType) => {
    queue = queue.then(() => send(message, type));
  };

  const scanner = createLogScanner({
    groupDelayMs: options.groupDelayMs,
    onError: (message) => enqueue(message, classifyError(message, source)),
    onResolved: (line) => enqueue(line, "resolved"),
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
