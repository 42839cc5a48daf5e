import { log } from "@/lib/log";
import type { RealtimeListener, RealtimeMessage } from "./port";

/** The subscribers of one driver instance, by channel. */
export interface ListenerRegistry {
  /** Adds `listener` to `channel`; returns the unsubscribe function (safe to call twice). */
  add(channel: string, listener: RealtimeListener): () => void;
  /** Hands `message` to every current listener of its channel; one that throws is logged and skipped. */
  deliver(message: RealtimeMessage): void;
  count(channel: string): number;
}

export function createListenerRegistry(driverName: string): ListenerRegistry {
  const listeners = new Map<string, Set<RealtimeListener>>();
  return {
    add(channel, listener) {
      const set = listeners.get(channel) ?? new Set<RealtimeListener>();
      set.add(listener);
      listeners.set(channel, set);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(channel) === set) listeners.delete(channel);
      };
    },
    deliver(message) {
      for (const listener of [...(listeners.get(message.channel) ?? [])]) {
        try {
          listener(message);
        } catch (error) {
          log.error("realtime listener failed", { driver: driverName, channel: message.channel, error });
        }
      }
    },
    count(channel) {
      return listeners.get(channel)?.size ?? 0;
    },
  };
}
