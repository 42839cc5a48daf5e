import type { SqlExecutor } from "@/lib/store";
import { listenForNotifications, notify } from "@/lib/store/notifications";
import { createFanOutRealtime, type FanOutRealtime } from "../fan-out";
import type { RealtimeDriverFactory } from "../port";

export interface PostgresRealtimeOptions {
  /** The database every instance shares; the listening connection opens its own session. */
  connectionString: string;
  /** Sends the notifications (and reads large ones); the process store in production. */
  db: () => Promise<SqlExecutor>;
  /** The PostgreSQL channel the instances share. @default "realtime_events" */
  pgChannel?: string;
}

/**
 * Fan-out over PostgreSQL LISTEN/NOTIFY: every instance listens on one channel, so an event
 * published on any instance reaches the SSE subscribers of all of them, with no service besides
 * the database.
 */
const driver: RealtimeDriverFactory<PostgresRealtimeOptions, FanOutRealtime> = (options) => {
  const channel = options.pgChannel ?? "realtime_events";
  return createFanOutRealtime("postgres", {
    send: async (text) => notify(await options.db(), channel, text),
    listen: (handlers) => listenForNotifications({ connectionString: options.connectionString, channel, db: options.db, ...handlers }),
  });
};

export default driver;
