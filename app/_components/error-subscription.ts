import type { default as PusherClient, Options as PusherOptions } from "pusher-js";
import type { RealtimeClientSettings } from "@/app/projects/[id]/data";

export type FeedStatus = "connecting" | "live" | "reconnecting" | "offline";

export interface FeedHandlers {
  /** Receives every event payload, parsed from JSON: the stored history first, then live ones. */
  onPayload: (payload: unknown) => void;
  onStatus: (status: FeedStatus) => void;
}

export interface FeedOptions {
  /** Sent with the history and channel-authorization requests, for clients without the session cookie. */
  headers?: Record<string, string>;
  /** Connection settings that replace the cluster's (a Pusher-compatible server of its own). */
  pusher?: Partial<PusherOptions>;
}

/**
 * Subscribes to a project's error notifications, history included, with whatever the server uses:
 * Server-Sent Events (this app's stream, with the memory, postgres or redis driver) or Pusher
 * Channels. Returns the unsubscribe function.
 */
export function subscribeToErrors(settings: RealtimeClientSettings, handlers: FeedHandlers, options: FeedOptions = {}): () => void {
  return settings.transport === "pusher" ? subscribePusher(settings, handlers, options) : subscribeSse(settings, handlers);
}

/**
 * The stream replays the stored history first; EventSource reconnects by itself and resumes
 * with `Last-Event-ID`, so nothing is missed or repeated.
 */
function subscribeSse(settings: Extract<RealtimeClientSettings, { transport: "sse" }>, handlers: FeedHandlers): () => void {
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

const idOf = (payload: unknown) => (payload as { id?: unknown } | null)?.id;

/**
 * pusher-js on the project's private channel, joined through the ownership-checked authorization
 * route; loaded on demand, so dashboards on Server-Sent Events never download it. Each time the
 * subscription succeeds (again after a reconnect) the stored history is loaded; live events wait
 * until it is delivered, and ids already delivered are skipped.
 */
function subscribePusher(
  settings: Extract<RealtimeClientSettings, { transport: "pusher" }>,
  handlers: FeedHandlers,
  options: FeedOptions,
): () => void {
  let pusher: PusherClient | undefined;
  const delivered = new Set<unknown>();
  let heldBack: unknown[] | null = [];
  let stopped = false;
  const deliver = (payload: unknown) => {
    const id = idOf(payload);
    if (id !== undefined) {
      if (delivered.has(id)) return;
      delivered.add(id);
    }
    handlers.onPayload(payload);
  };

  async function loadHistory(): Promise<void> {
    heldBack ??= [];
    try {
      const response = await fetch(settings.historyUrl, { headers: options.headers, credentials: "same-origin" });
      if (response.ok) {
        const body = (await response.json()) as { notifications?: unknown[] };
        if (!stopped) for (const payload of body.notifications ?? []) deliver(payload);
      }
    } catch {
      // Without history the live events still arrive.
    }
    const live = heldBack ?? [];
    heldBack = null;
    if (!stopped) for (const payload of live) deliver(payload);
  }

  function connect(Pusher: typeof PusherClient): void {
    if (stopped) return;
    pusher = new Pusher(settings.key, {
      cluster: settings.cluster,
      channelAuthorization: { endpoint: settings.authEndpoint, transport: "ajax", headers: options.headers },
      ...options.pusher,
    });
    pusher.connection.bind("state_change", ({ current }: { current: string }) => {
      if (current === "unavailable" || current === "disconnected") handlers.onStatus("reconnecting");
      else if (current === "failed") handlers.onStatus("offline");
    });
    const channel = pusher.subscribe(settings.channel);
    channel.bind("pusher:subscription_succeeded", () => {
      handlers.onStatus("live");
      void loadHistory();
    });
    channel.bind("pusher:subscription_error", () => handlers.onStatus("offline"));
    channel.bind(settings.event, (payload: unknown) => (heldBack ? heldBack.push(payload) : deliver(payload)));
  }

  handlers.onStatus("connecting");
  import("pusher-js").then(({ default: Pusher }) => connect(Pusher), () => handlers.onStatus("offline"));
  return () => {
    stopped = true;
    pusher?.disconnect();
  };
}
