/** Proxies drop idle connections after 30–60 s; a comment line every 15 s keeps them open (config SSE_HEARTBEAT_MS). */
export const DEFAULT_HEARTBEAT_MS = 15_000;

/** A client this far behind is disconnected; it reconnects and resumes with `Last-Event-ID`. */
const MAX_QUEUED_CHUNKS = 1000;

/** One event of a stream; `id` is what a reconnecting client sends back as `Last-Event-ID`. */
export interface SseEvent {
  id: string;
  event: string;
  data: unknown;
}

/** Where a stream's events come from: stored ones to replay, then live ones. */
export interface SseSource {
  /** The stored events after `afterId` (all kept ones when null), oldest first. */
  replay(afterId: string | null): Promise<SseEvent[]>;
  /** Delivers every later event to `listener`; returns the unsubscribe function. */
  subscribe(listener: (event: SseEvent) => void): () => void;
  /**
   * Calls `callback` when live events may have been missed (a fan-out driver's connection was
   * lost); returns the function that stops the calls.
   */
  onInterrupted?(callback: () => void): () => void;
}

export interface SseResponseOptions {
  source: SseSource;
  /** Ends the stream when aborted: the client disconnected (the request's signal), the service shuts down. */
  signal: AbortSignal;
  /** The client's `Last-Event-ID` header: stored events after it are sent first. */
  lastEventId?: string | null;
  /** @default 15000 */
  heartbeatMs?: number;
}

const encoder = new TextEncoder();

function formatEvent(event: SseEvent): string {
  // JSON.stringify never emits a raw line break, so one `data:` line carries the whole payload.
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** Ids of the events a stream sent last, remembered so a replay after an interruption sends none twice. */
const REMEMBERED_SENT_IDS = 1000;

/**
 * A `text/event-stream` response: the source's stored events after `lastEventId`, then its live
 * ones, with heartbeats. Live events are subscribed to before the replay is read, and held back
 * until it is sent, so none falls between the two and none is sent twice. When the source reports
 * missed live events (its bus was away), the stream replays the stored history again the same way,
 * sending what it had not sent; heartbeats go on meanwhile. The stream ends when the client
 * disconnects, cancels the body, or falls too far behind.
 */
export function createSseResponse(options: SseResponseOptions): Response {
  let stop: () => void = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      // Filled as resources are acquired, so stopping early releases exactly what exists.
      const cleanups: (() => void)[] = [];

      stop = () => {
        if (!open) return;
        open = false;
        for (const cleanup of cleanups) cleanup();
      };
      function end(): void {
        if (!open) return;
        stop();
        controller.close();
      }
      function send(text: string): void {
        if (!open) return;
        controller.enqueue(encoder.encode(text));
        if ((controller.desiredSize ?? 0) < -MAX_QUEUED_CHUNKS) end();
      }
      const sentIds = new Set<string>();
      function sendEvent(event: SseEvent): void {
        if (sentIds.has(event.id)) return;
        sentIds.add(event.id);
        if (sentIds.size > REMEMBERED_SENT_IDS) sentIds.delete(sentIds.values().next().value!);
        send(formatEvent(event));
      }

      send("retry: 3000\n: connected\n\n");
      // Live events wait here while a replay is read, then follow it.
      let heldBack: SseEvent[] | null = [];
      cleanups.push(options.source.subscribe((event) => (heldBack ? heldBack.push(event) : sendEvent(event))));
      if (options.signal.aborted) return end();
      options.signal.addEventListener("abort", end);
      cleanups.push(() => options.signal.removeEventListener("abort", end));
      const heartbeat = setInterval(() => send(": heartbeat\n\n"), options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
      cleanups.push(() => clearInterval(heartbeat));

      // Always from the client's `Last-Event-ID`: events may have come back from the bus out of
      // order around an outage, and the ids already sent are skipped.
      async function replay(): Promise<void> {
        heldBack ??= [];
        let replayed: SseEvent[];
        try {
          replayed = await options.source.replay(options.lastEventId ?? null);
        } catch (error) {
          if (!open) return;
          stop();
          controller.error(error);
          return;
        }
        for (const event of replayed) sendEvent(event);
        const live = heldBack;
        heldBack = null;
        for (const event of live) sendEvent(event);
      }
      // One replay at a time: a second interruption during a replay replays again after it.
      let replaying = replay();
      const stopWatching = options.source.onInterrupted?.(() => {
        // Held back from now on: a live event must not overtake the missed ones the replay brings.
        heldBack ??= [];
        replaying = replaying.then(() => (open ? replay() : undefined));
      });
      if (stopWatching) cleanups.push(stopWatching);
    },
    cancel() {
      stop();
    },
  });

  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Tells nginx-style proxies not to buffer the stream.
      "x-accel-buffering": "no",
    },
  });
}
