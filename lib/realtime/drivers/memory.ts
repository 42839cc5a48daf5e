import { checkPublishable } from "../limits";
import { createListenerRegistry } from "../listeners";
import type { Realtime, RealtimeDriverFactory, RealtimeListener } from "../port";

/** The memory driver has no settings. */
export type MemoryRealtimeOptions = Record<string, never>;

/** The memory driver also reports how many listeners a channel has (tests, diagnostics). */
export interface MemoryRealtime extends Realtime {
  subscribe(channel: string, listener: RealtimeListener): () => void;
  listenerCount(channel: string): number;
}

const DRIVER_NAME = "memory";

/**
 * In-process fan-out: every publish reaches the current subscribers of the channel at once (the
 * SSE route subscribes per connected client). Works for one server process; several instances
 * need the postgres or redis driver (or pusher).
 */
const driver: RealtimeDriverFactory<MemoryRealtimeOptions, MemoryRealtime> = () => {
  // Ids are `<instance>-<sequence>`, unique within this process; stored history has its own ids.
  const instance = crypto.randomUUID().slice(0, 8);
  let sequence = 0;
  const listeners = createListenerRegistry(DRIVER_NAME);

  return {
    name: DRIVER_NAME,
    async publish(channel, event, payload) {
      checkPublishable(channel, event, payload);
      sequence += 1;
      listeners.deliver({ id: `${instance}-${sequence}`, channel, event, payload });
    },
    subscribe: listeners.add,
    listenerCount: listeners.count,
  };
};

export default driver;
