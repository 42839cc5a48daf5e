import { log } from "@/lib/log";
import { redactSecrets } from "@/lib/log/redact";
import { buildErrorNotification, type ErrorNotificationSource, type ErrorNotificationType, type Realtime } from "@/lib/realtime";
import { sendErrorNotification } from "@/lib/realtime/error-notifications";
import { getStore, type SqlExecutor } from "@/lib/store";
import { resolveErrorNotifications } from "@/lib/store/error-notifications";
import { createLogScanner, type LogScannerStats } from "./scanner";
import { structureError } from "./structure";

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
 * then published on its realtime error channel): one per error group, structured (kind, file,
 * position, code frame, fingerprint), except a repeat of an error of this source that is still
 * unresolved. A success line of the dev server resolves every unresolved error of its source,
 * those left by an earlier run too, and sends one `resolved` notification naming them. They are
 * sent one after another, in the order they appeared; a failure is logged and never reaches the
 * caller.
 */
export function createErrorReporter(options: ErrorReporterOptions): ErrorReporter {
  const { projectId, source } = options;
  const delivery = { db: options.db, realtime: options.realtime, retryDelayMs: options.retryDelayMs };
  let queue: Promise<void> = Promise.resolve();

  async function sendError(message: string): Promise<void> {
    const timestamp = new Date();
    // Read from the redacted text: a fingerprint or code frame never derives from a secret.
    const details = { ...structureError(redactSecrets(message), source), firstSeenAt: timestamp.toISOString(), resolvedAt: null };
    const type = classifyError(message, source);
    await sendErrorNotification(buildErrorNotification({ message, projectId, source, type, timestamp, details }), delivery);
  }

  async function sendResolved(line: string): Promise<void> {
    const timestamp = new Date();
    const resolvedAt = timestamp.toISOString();
    const resolves = await resolveErrorNotifications(options.db ?? (await getStore()), projectId, source, resolvedAt);
    if (resolves.length === 0) return;
    const notification = buildErrorNotification({ message: line, projectId, source, type: "resolved", timestamp, details: { resolvedAt, resolves } });
    await sendErrorNotification(notification, delivery);
  }

  const enqueue = (send: () => Promise<void>) => {
    queue = queue.then(send).catch((error: unknown) => log.error("error notification not sent", { projectId, source, error }));
  };

  const scanner = createLogScanner({
    groupDelayMs: options.groupDelayMs,
    unresolvedAtStart: true,
    onError: (message) => enqueue(() => sendError(message)),
    onResolved: (line) => enqueue(() => sendResolved(line)),
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
