import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { shutdownSignal } from "@/lib/shutdown";
import { processSingleton } from "@/lib/singletons";
import { getStore, type SqlExecutor } from "@/lib/store";
import { insertErrorNotification, listErrorNotifications } from "@/lib/store/error-notifications";
import memoryDriver from "./drivers/memory";
import { ERROR_EVENT, errorChannel, type ErrorNotification } from "./payload";
import { publishWithRetry } from "./publish";
import { createSseResponse, type SseEvent, type SseSource } from "./sse";
import type { Realtime, RealtimeListener } from "./port";
import { getRealtime } from "./index";

/** Notifications kept per project for subscribers that connect later (history, page reloads). */
export const ERROR_HISTORY_SIZE = 200;

/** A notification as it is stored and delivered: `id` is its row id, stable across restarts. */
export interface StoredErrorNotification extends ErrorNotification {
  id: string;
}

export interface ErrorNotificationOptions {
  /** @default getStore() */
  db?: SqlExecutor;
  /** @default getRealtime() */
  realtime?: Realtime;
  /** Wait before the one retry of a failed publish. @default 500 */
  retryDelayMs?: number;
}

type InProcessRealtime = Realtime & Required<Pick<Realtime, "subscribe">>;

// SSE subscribers of this process listen here. A driver that delivers to this process (memory,
// and postgres and redis, which bring every instance's events back to every instance) is that bus
// itself, so a notification is published once and each subscriber gets it once; one that delivers
// elsewhere (pusher) gets this process-wide one beside it.
function inProcessBus(realtime: Realtime): InProcessRealtime {
  if (realtime.subscribe) return realtime as InProcessRealtime;
  return processSingleton("errorNotificationBus", () => memoryDriver({}) as InProcessRealtime);
}

/**
 * The one way an error notification leaves the server: it is stored (the project keeps its last
 * ERROR_HISTORY_SIZE), delivered to this process's SSE subscribers, and published through the
 * configured driver. A notification with a fingerprint that repeats an unresolved error of its
 * source is neither stored nor sent. Never throws; a failure is logged.
 * @returns the delivered notification; null for a repeat or when it could not be stored
 */
export async function sendErrorNotification(
  notification: ErrorNotification,
  options: ErrorNotificationOptions = {},
): Promise<StoredErrorNotification | null> {
  const { projectId } = notification;
  let stored: StoredErrorNotification;
  let realtime: Realtime;
  try {
    const db = options.db ?? (await getStore());
    realtime = options.realtime ?? getRealtime();
    const { fingerprint, source } = notification;
    const identity = fingerprint && notification.type !== "resolved" ? { source, fingerprint } : undefined;
    const id = await insertErrorNotification(db, projectId, notification, ERROR_HISTORY_SIZE, identity);
    if (id === null) return null;
    stored = { ...notification, id };
  } catch (error) {
    log.error("error notification not stored", { projectId, error });
    return null;
  }
  const channel = errorChannel(projectId);
  const bus = inProcessBus(realtime);
  if (bus !== realtime) await publishWithRetry(bus, channel, ERROR_EVENT, stored);
  await publishWithRetry(realtime, channel, ERROR_EVENT, stored, { retryDelayMs: options.retryDelayMs });
  return stored;
}

/** The project's stored notifications after `afterId` (all kept ones when null), oldest first. */
export async function listStoredErrorNotifications(
  db: SqlExecutor,
  projectId: string,
  afterId: string | null = null,
): Promise<StoredErrorNotification[]> {
  const rows = await listErrorNotifications<ErrorNotification>(db, projectId, { afterId, limit: ERROR_HISTORY_SIZE });
  return rows.map((row) => ({ ...row.payload, id: row.id }));
}

const toEvent = (notification: StoredErrorNotification): SseEvent => ({ id: notification.id, event: ERROR_EVENT, data: notification });

/** A project's notifications as an SSE source: the stored history, then live ones, with any driver. */
export function errorNotificationSource(db: SqlExecutor, projectId: string, realtime: Realtime = getRealtime()): SseSource {
  return {
    async replay(afterId) {
      // Listening before the history is read: a notification stored after the read is then
      // delivered live (the SSE stream subscribed already), so none falls in between.
      await inProcessBus(realtime).ready?.();
      return (await listStoredErrorNotifications(db, projectId, afterId)).map(toEvent);
    },
    subscribe(listener) {
      // The channel also carries other events of the project (job progress), which are not notifications.
      const forward: RealtimeListener = (message) => {
        if (message.event === ERROR_EVENT) listener(toEvent(message.payload as StoredErrorNotification));
      };
      return inProcessBus(realtime).subscribe(errorChannel(projectId), forward);
    },
    onInterrupted(callback) {
      return inProcessBus(realtime).onResumed?.(callback) ?? (() => {});
    },
  };
}

/** GET /api/projects/<id>/errors: the project's stored notifications (the last 200), oldest first. */
export const listProjectErrorNotifications = async (projectId: string) => listStoredErrorNotifications(await getStore(), projectId);

/** GET /api/projects/<id>/errors/stream: {@link errorNotificationSource} as Server-Sent Events, ended at shutdown. */
export async function streamProjectErrorNotifications(projectId: string, request: Request): Promise<Response> {
  return createSseResponse({
    source: errorNotificationSource(await getStore(), projectId),
    signal: AbortSignal.any([request.signal, shutdownSignal()]),
    lastEventId: request.headers.get("last-event-id"),
    heartbeatMs: getConfig().SSE_HEARTBEAT_MS,
  });
}
