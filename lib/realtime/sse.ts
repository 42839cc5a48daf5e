import { RealtimeNotConfiguredError } from "./errors";
import type { Realtime, RealtimeMessage } from "./types";

/** Proxies drop idle connections after 30–60 s; a comment line every 15 s keeps them open. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

/** A client this far behind is disconnected; it reconnects and resumes with `Last-Event-ID`. */
const MAX_QUEUED_CHUNKS = 1000;

export interface SseResponseOptions {
  realtime: Realtime;
  channel: string;
  /** Aborted when the client disconnects (the request's signal). */
  signal: AbortSignal;
  /** The client's `Last-Event-ID` header: retained events after it are sent first. */
  lastEventId?: string | null;
  /** @default 15000 */
  heartbeatMs?: number;
}

const encoder = new TextEncoder();

function formatEvent(message: RealtimeMessage): string {
  // JSON.stringify never emits a raw line break, so one `data:` line carries the whole payload.
  return `id: ${message.id}\nevent: ${message.event}\ndata: ${JSON.stringify(message.payload)}\n\n`;
}

/**
 * A `text/event-stream` response carrying every event of `channel`, with heartbeats. The
 * subscription ends when the client disconnects, cancels the body, or falls too far behind.
 * @throws RealtimeNotConfiguredError when the driver cannot deliver in-process (pusher)
 */
export function createSseResponse(options: SseResponseOptions): Response {
  const { realtime } = options;
  if (!realtime.subscribe) {
    throw new RealtimeNotConfiguredError(
      `the ${realtime.name} driver delivers through its own service; subscribe to channel "${options.channel}" with its client.`,
    );
  }
  const subscribe = realtime.subscribe.bind(realtime);
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

      send("retry: 3000\n: connected\n\n");
      const unsubscribe = subscribe(options.channel, (message) => send(formatEvent(message)), {
        afterId: options.lastEventId,
      });
      // The replay alone may already have overflowed the queue and ended the stream.
      if (!open) return unsubscribe();
      cleanups.push(unsubscribe);
      const heartbeat = setInterval(() => send(": heartbeat\n\n"), options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
      cleanups.push(() => clearInterval(heartbeat));
      if (options.signal.aborted) return end();
      options.signal.addEventListener("abort", end);
      cleanups.push(() => options.signal.removeEventListener("abort", end));
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
