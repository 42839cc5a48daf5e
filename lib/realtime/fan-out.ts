import { log } from "@/lib/log";
import { checkPublishable } from "./limits";
import { createListenerRegistry } from "./listeners";
import { RealtimePublishError } from "./errors";
import type { Realtime, RealtimeListener, RealtimeMessage } from "./port";

/**
 * A message bus every instance listens on (Postgres LISTEN/NOTIFY, Redis pub/sub). It carries
 * opaque text; `send` reaches every listening instance, the sender's own included.
 */
export interface FanOutBus {
  send(text: string): Promise<void>;
  /**
   * Starts listening; `ready` resolves when texts sent from then on will arrive. `onResumed` is
   * called when listening starts again after the connection was lost.
   */
  listen(handlers: BusHandlers): { ready: Promise<void>; close: () => Promise<void> };
}

export interface BusHandlers {
  onText: (text: string) => void;
  onResumed: () => void;
}

/** What travels on the bus: the event's names, its id and its encoded data. */
interface Envelope {
  id: string;
  channel: string;
  event: string;
  data: string;
}

export interface FanOutRealtime extends Realtime {
  subscribe(channel: string, listener: RealtimeListener): () => void;
  ready(): Promise<void>;
  onResumed(callback: () => void): () => void;
  close(): Promise<void>;
}

/** The message a bus text carries, or null when the text is not an envelope written by `publish`. */
function parseMessage(text: string): RealtimeMessage | null {
  try {
    const value = JSON.parse(text) as Partial<Envelope>;
    const { id, channel, event, data } = value;
    if (typeof id !== "string" || typeof channel !== "string" || typeof event !== "string" || typeof data !== "string") return null;
    return { id, channel, event, payload: JSON.parse(data) };
  } catch {
    return null;
  }
}

/**
 * A realtime driver over a shared bus. `publish` only sends; every instance's subscribers,
 * the publisher's included, get the event when it comes back from the bus, so each gets it
 * exactly once whichever instance published it.
 */
export function createFanOutRealtime(name: string, bus: FanOutBus): FanOutRealtime {
  // Ids are `<instance>-<sequence>`: unique across instances, since each has its own prefix.
  const instance = crypto.randomUUID();
  let sequence = 0;
  const listeners = createListenerRegistry(name);
  const resumedCallbacks = new Set<() => void>();
  const listening = bus.listen({
    onText(text) {
      const message = parseMessage(text);
      if (message) listeners.deliver(message);
      else log.warn("realtime message ignored", { driver: name, reason: "not an event envelope" });
    },
    onResumed() {
      log.info("realtime listening resumed", { driver: name, subscribers: resumedCallbacks.size });
      for (const callback of [...resumedCallbacks]) callback();
    },
  });
  // Closing settles a `ready()` still waiting for a bus that never answered.
  let markClosed: (error: Error) => void = () => {};
  const closing = new Promise<never>((_resolve, reject) => (markClosed = reject));
  const ready = Promise.race([listening.ready, closing]);
  // Callers await `ready()`; an unhandled rejection here would only duplicate that report.
  ready.catch(() => undefined);

  return {
    name,
    async publish(channel, event, payload) {
      const data = checkPublishable(channel, event, payload);
      sequence += 1;
      const envelope: Envelope = { id: `${instance}-${sequence}`, channel, event, data };
      try {
        await bus.send(JSON.stringify(envelope));
      } catch (error) {
        throw new RealtimePublishError(undefined, `The ${name} realtime bus did not take the event.`, { cause: error });
      }
    },
    subscribe: listeners.add,
    ready: () => ready,
    onResumed(callback) {
      resumedCallbacks.add(callback);
      return () => resumedCallbacks.delete(callback);
    },
    close() {
      markClosed(new Error(`The ${name} realtime driver was closed before it was listening.`));
      return listening.close();
    },
  };
}
