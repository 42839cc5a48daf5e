import { createClient } from "@redis/client";
import { log } from "@/lib/log";
import { createFanOutRealtime, type FanOutRealtime } from "../fan-out";
import type { RealtimeDriverFactory } from "../types";

export interface RedisRealtimeOptions {
  /** @example "redis://127.0.0.1:6379" */
  url: string;
  /** The Redis channel the instances share. @default "realtime-events" */
  redisChannel?: string;
}

/**
 * Fan-out over Redis pub/sub (node-redis): one connection publishes, one subscribes (a
 * subscribed connection can run nothing else). node-redis reconnects both and subscribes again
 * by itself; events published while the subscriber is away are lost, as with any pub/sub.
 */
const driver: RealtimeDriverFactory<RedisRealtimeOptions, FanOutRealtime> = (options) => {
  const channel = options.redisChannel ?? "realtime-events";
  const publisher = createClient({ url: options.url });
  const subscriber = publisher.duplicate();
  // Without a listener an "error" event would crash the process; node-redis reconnects by itself.
  publisher.on("error", (error) => log.warn("redis realtime connection failed", { role: "publisher", error }));
  subscriber.on("error", (error) => log.warn("redis realtime connection failed", { role: "subscriber", error }));
  const publisherConnected = publisher.connect();
  publisherConnected.catch(() => undefined);

  return createFanOutRealtime("redis", {
    async send(text) {
      await publisherConnected;
      await publisher.publish(channel, text);
    },
    listen({ onText, onResumed }) {
      let subscribed = false;
      // node-redis subscribes again by itself on every reconnection, before "ready".
      subscriber.on("ready", () => subscribed && onResumed());
      return {
        ready: subscriber
          .connect()
          .then(() => subscriber.subscribe(channel, (text) => onText(text)))
          .then(() => void (subscribed = true)),
        async close() {
          // A client still trying to connect is dropped at once, so closing never waits on a
          // Redis that does not answer.
          const release = async (client: typeof publisher) => (client.isReady ? client.close() : client.destroy());
          await Promise.allSettled([release(publisher), release(subscriber)]);
        },
      };
    },
  });
};

export default driver;
