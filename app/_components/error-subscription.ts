import type { RealtimeClientSettings } from "@/app/projects/[id]/data";

export type FeedStatus = "connecting" | "live" | "reconnecting" | "offline";

export interface FeedHandlers {
  /** Receives every event payload, parsed from JSON. */
  onPayload: (payload: unknown) => void;
  onStatus: (status: FeedStatus) => void;
}

/**
 * Subscribes to a project's error notifications with whatever the server uses: Server-Sent
 * Events (memory driver) or Pusher Channels. Returns the unsubscribe function.
 */
export function subscribeToErrors(settings: RealtimeClientSettings, handlers: FeedHandlers): () => void {
  return settings.driver === "pusher" ? subscribePusher(settings, handlers) : subscribeSse(settings, handlers);
}

/** EventSource reconnects by itself and resumes with `Last-Event-ID`, so nothing is missed. */
function subscribeSse(settings: Extract<RealtimeClientSettings, { driver: "memory" }>, handlers: FeedHandlers): () => void {
  const source = new EventSource(settings.streamUrl);
  handlers.onStatus("connecting");
  source.onopen = () => handlers.onStatus("live");
  // CONNECTING after an error means the browser retries; CLOSED (e.g. 401) means it gave up.
  source.onerror = () => handlers.onStatus(source.readyState === EventSource.CLOSED ? "offline" : "reconnecting");
  source.addEventListener(settings.event, (event) => {
    try {
      handlers.onPayload(JSON.parse((event as MessageEvent<string>).data));
    } catch {
      // A malformed event is skipped; the stream goes on.
    }
  });
  return () => source.close();
}

const PUSHER_MAX_RETRY_MS = 30_000;

/**
 * A minimal Pusher Channels client (protocol 7) for one public channel: subscribe after the
 * connection is established, answer pings, reconnect with backoff. Saves shipping pusher-js.
 */
function subscribePusher(settings: Extract<RealtimeClientSettings, { driver: "pusher" }>, handlers: FeedHandlers): () => void {
  const url = `wss://ws-${settings.cluster}.pusher.com/app/${encodeURIComponent(settings.key)}?protocol=7&client=cbs-dashboard&version=1.0&flash=false`;
  let socket: WebSocket | undefined;
  let stopped = false;
  let retryMs = 1_000;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  const send = (event: string, data: unknown) => socket?.send(JSON.stringify({ event, data }));

  const connect = () => {
    handlers.onStatus("connecting");
    socket = new WebSocket(url);
    socket.onmessage = (message) => {
      let frame: { event: string; channel?: string; data?: unknown };
      let data: unknown;
      try {
        frame = JSON.parse(String(message.data));
        // Pusher sends `data` JSON-encoded as a string.
        data = typeof frame.data === "string" ? JSON.parse(frame.data) : frame.data;
      } catch {
        return;
      }
      if (frame.event === "pusher:connection_established") {
        retryMs = 1_000;
        send("pusher:subscribe", { channel: settings.channel });
      } else if (frame.event === "pusher_internal:subscription_succeeded") {
        handlers.onStatus("live");
      } else if (frame.event === "pusher:ping") {
        send("pusher:pong", {});
      } else if (frame.event === settings.event && frame.channel === settings.channel) {
        handlers.onPayload(data);
      }
    };
    socket.onclose = () => {
      if (stopped) return;
      handlers.onStatus("reconnecting");
      retryTimer = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, PUSHER_MAX_RETRY_MS);
    };
  };

  connect();
  return () => {
    stopped = true;
    clearTimeout(retryTimer);
    socket?.close();
  };
}
