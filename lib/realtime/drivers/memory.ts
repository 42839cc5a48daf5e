import { log } from "@/lib/log";
import { checkPublishable } from "../limits";
import type { Realtime, RealtimeDriverFactory, RealtimeListener, RealtimeMessage, SubscribeOptions } from "../types";

export interface MemoryRealtimeOptions {
  /**
   * Messages kept per channel for clients that reconnect with `Last-Event-ID`.
   * @default 50
   */
  historySize?: number;
  /**
   * Channels whose history is kept; the least recently published one is forgotten first.
   * @default 1000
   */
  maxChannels?: number;
}

/** The memory driver also reports how many listeners a channel has (tests, diagnostics). */
export interface MemoryRealtime extends Realtime {
  subscribe(channel: string, listener: RealtimeListener, options?: SubscribeOptions): () => void;
  listenerCount(channel: string): number;
}

const DRIVER_NAME = "memory";

/**
 * In-process fan-out: every publish reaches the current subscribers of the channel at once (the
 * SSE route subscribes per connected client). Works for one server process; several instances
 * would need a shared bus or the pusher driver.
 */
const driver: RealtimeDriverFactory<MemoryRealtimeOptions, MemoryRealtime> = (options = {}) => {
  const historySize = options.historySize ?? 50;
  const maxChannels = options.maxChannels ?? 1000;
  // Ids are `<instance>-<sequence>`: an id from another instance (a restart) is recognisably foreign.
  const instance = crypto.randomUUID().slice(0, 8);
  let sequence = 0;
  const listeners = new Map<string, Set<RealtimeListener>>();
  const history = new Map<string, RealtimeMessage[]>();

  function remember(message: RealtimeMessage): void {
    const kept = history.get(message.channel) ?? [];
    kept.push(message);
    if (kept.length > historySize) kept.shift();
    // Re-inserting moves the channel to the end, so the first key is the least recently used.
    history.delete(message.channel);
    history.set(message.channel, kept);
    if (history.size > maxChannels) history.delete(history.keys().next().value as string);
  }

  function deliver(listener: RealtimeListener, message: RealtimeMessage): void {
    try {
      listener(message);
    } catch (error) {
      log.error("realtime listener failed", { driver: DRIVER_NAME, channel: message.channel, error });
    }
  }

  function missedSince(channel: string, afterId: string): RealtimeMessage[] {
    const kept = history.get(channel) ?? [];
    const [idInstance, idSequence] = afterId.split("-");
    if (idInstance !== instance) return kept;
    return kept.filter((message) => Number(message.id.split("-")[1]) > Number(idSequence));
  }

  return {
    name: DRIVER_NAME,
    async publish(channel, event, payload) {
      checkPublishable(channel, event, payload);
      sequence += 1;
      const message: RealtimeMessage = { id: `${instance}-${sequence}`, channel, event, payload };
      remember(message);
      for (const listener of [...(listeners.get(channel) ?? [])]) deliver(listener, message);
    },
    subscribe(channel, listener, subscribeOptions) {
      if (subscribeOptions?.afterId) {
        for (const message of missedSince(channel, subscribeOptions.afterId)) deliver(listener, message);
      }
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
