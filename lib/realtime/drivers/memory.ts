import { log } from "@/lib/log";
import { checkPublishable } from "../limits";
import type { Realtime, RealtimeDriverFactory, RealtimeListener, RealtimeMessage } from "../types";

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
 * would need a shared bus or the pusher driver.
 */
const driver: RealtimeDriverFactory<MemoryRealtimeOptions, MemoryRealtime> = () => {
  // Ids are `<instance>-<sequence>`, unique within this process; stored history has its own ids.
  const instance = crypto.randomUUID().slice(0, 8);
  let sequence = 0;
  const listeners = new Map<string, Set<RealtimeListener>>();

  function deliver(listener: RealtimeListener, message: RealtimeMessage): void {
    try {
      listener(message);
    } catch (error) {
      log.error("realtime listener failed", { driver: DRIVER_NAME, channel: message.channel, error });
    }
  }

  return {
    name: DRIVER_NAME,
    async publish(channel, event, payload) {
      checkPublishable(channel, event, payload);
      sequence += 1;
      const message: RealtimeMessage = { id: `${instance}-${sequence}`, channel, event, payload };
      for (const listener of [...(listeners.get(channel) ?? [])]) deliver(listener, message);
    },
    subscribe(channel, listener) {
      const set = listeners.get(channel) ?? new Set<RealtimeListener>();
      set.add(listener);
      listeners.set(channel, set);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(channel) === set) listeners.delete(channel);
      };
    },
    listenerCount(channel) {
      return listeners.get(channel)?.size ?? 0;
    },
  };
};

export default driver;
