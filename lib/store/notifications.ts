import type pg from "pg";
import { log } from "@/lib/log";
import { loadPg } from "./drivers/postgres";
import type { SqlExecutor } from "./port";

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7999;

/** Marks a notification that names a realtime_messages row instead of carrying the text. */
const ROW_REFERENCE = "row:";

/** How long a large text's row is kept for listeners that are slow to read it. */
const KEPT_ROWS_INTERVAL = "5 minutes";

const RECONNECT_DELAYS_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * A listening connection only receives, so one that died silently (a NAT or load balancer
 * forgetting it) would go unnoticed; a query this often, answered within the timeout, proves it
 * alive.
 */
const HEARTBEAT_MS = 30_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * Sends `text` to every session listening on `channel`. A text over the NOTIFY limit is stored
 * in realtime_messages and the notification carries its row id.
 */
export async function notify(db: SqlExecutor, channel: string, text: string): Promise<void> {
  let payload = text;
  if (Buffer.byteLength(text) > MAX_NOTIFY_PAYLOAD_BYTES) {
    await db.query(`delete from realtime_messages where created_at < now() - interval '${KEPT_ROWS_INTERVAL}'`);
    const { rows } = await db.query<{ id: string }>("insert into realtime_messages (body) values ($1) returning id::text as id", [text]);
    payload = `${ROW_REFERENCE}${rows[0].id}`;
  }
  await db.query("select pg_notify($1, $2)", [channel, payload]);
}

export interface NotificationListenerOptions {
  connectionString: string;
  channel: string;
  /** Reads the texts of large notifications. */
  db: () => Promise<SqlExecutor>;
  /** Gets each text, in the order they were sent. */
  onText: (text: string) => void;
  /** Called when listening starts again after the connection was lost (texts sent meanwhile are lost). */
  onResumed: () => void;
}

export interface NotificationListener {
  /** Resolves when the first LISTEN is in effect. */
  ready: Promise<void>;
  close: () => Promise<void>;
}

async function readText(db: () => Promise<SqlExecutor>, payload: string): Promise<string | null> {
  if (!payload.startsWith(ROW_REFERENCE)) return payload;
  const { rows } = await (await db()).query<{ body: string }>("select body from realtime_messages where id = $1::bigint", [
    payload.slice(ROW_REFERENCE.length),
  ]);
  return rows[0]?.body ?? null;
}

/**
 * LISTENs on `channel` over a connection of its own (a pooled one would be handed to other
 * queries). When the connection drops, it connects again with growing delays; notifications sent
 * while it was down are lost, as with any LISTEN.
 */
export function listenForNotifications(options: NotificationListenerOptions): NotificationListener {
  let closed = false;
  let client: pg.Client | null = null;
  let attempt = 0;
  let listened = false;
  let retryTimer: NodeJS.Timeout | undefined;
  // The current connection's; one connection is open at a time.
  let heartbeat: NodeJS.Timeout | undefined;
  // Texts are handed on one after another, so a large one being read is not overtaken.
  let handing = Promise.resolve();
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  function receive(message: pg.Notification): void {
    if (closed || message.channel !== options.channel || message.payload === undefined) return;
    const payload = message.payload;
    handing = handing
      .then(async () => {
        const text = await readText(options.db, payload);
        if (text === null) log.warn("realtime message expired before it was read", { payload });
        else options.onText(text);
      })
      .catch((error) => log.error("realtime notification not read", { error }));
  }

  function scheduleReconnect(): void {
    if (closed || retryTimer) return;
    const delay = RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length - 1)];
    attempt += 1;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, delay);
  }

  async function connect(): Promise<void> {
    const { Client, escapeIdentifier } = await loadPg();
    if (closed) return;
    const connection = new Client({
      connectionString: options.connectionString,
      connectionTimeoutMillis: HEARTBEAT_TIMEOUT_MS,
      query_timeout: HEARTBEAT_TIMEOUT_MS,
    });
    client = connection;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost || closed) return;
      lost = true;
      clearInterval(heartbeat);
      log.warn("realtime listening connection lost", { error });
      connection.end().catch(() => undefined);
      scheduleReconnect();
    };
    connection.on("error", onLost);
    connection.on("end", () => onLost());
    connection.on("notification", receive);
    try {
      await connection.connect();
      await connection.query(`listen ${escapeIdentifier(options.channel)}`);
    } catch (error) {
      return onLost(error as Error);
    }
    if (closed) return void connection.end().catch(() => undefined);
    heartbeat = setInterval(() => connection.query("select 1").catch(onLost), HEARTBEAT_MS);
    heartbeat.unref();
    attempt = 0;
    if (listened) options.onResumed();
    listened = true;
    markReady();
  }

  void connect();
  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(heartbeat);
      await client?.end().catch(() => undefined);
      await handing;
    },
  };
}
