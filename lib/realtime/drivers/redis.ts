import { log } from "@/lib/log";
import { createFanOutRealtime, type FanOutRealtime } from "../fan-out";
import type { RealtimeDriverFactory } from "../port";

export interface RedisRealtimeOptions {
  /** @example "redis://127.0.0.1:6379" */
  url: string;
  /** The Redis channel the instances share. @default "realtime-events" */
  redisChannel?: string;
  /** The connections' name in Redis's CLIENT LIST (monitoring). @default "realtime" */
  clientName?: string;
}

/**
 * Fan-out over Redis pub/sub (node-redis): one connection publishes, one subscribes (a
 * subscribed connection can run nothing else). node-redis reconnects both and subscribes again
 * by itself; events published while the subscriber is away are lost, as with any pub/sub, and
 * `onResumed` tells the SSE streams to replay them from the stored history.
 */
const driver: RealtimeDriverFactory<RedisRealtimeOptions, FanOutRealtime> = (options) => {
  const channel = options.redisChannel ?? "realtime-events";
  // node-redis is imported here, when this driver is chosen, so other setups never load it.
  const connections = import("@redis/client").then(({ createClient }) => {
    // Without the offline queue a publish while Redis is away fails at once instead of waiting for
    // the connection to come back: the publisher goes on, and subscribers get the event from the
    // stored history when their stream replays it after the outage.
    const publisher = createClient({ url: options.url, name: options.clientName ?? "realtime", disableOfflineQueue: true });
    const subscriber = publisher.duplicate({ disableOfflineQueue: false });
    // Without a listener an "error" event would crash the process; node-redis reconnects by itself.
    publisher.on("error", (error) => log.warn("redis realtime connection failed", { role: "publisher", error }));
    subscriber.on("error", (error) => log.warn("redis realtime connection failed", { role: "subscriber", error }));
    const publisherConnected = publisher.connect();
    publisherConnected.catch(() => undefined);
    const subscriberConnected = subscriber.connect();
    subscriberConnected.catch(() => undefined);
    return { publisher, subscriber, publisherConnected, subscriberConnected };
  });
  type Client = Awaited<typeof connections>["publisher"];

  // A client still connecting is dropped at once, so closing never waits on a Redis that does
  // not answer; should its connection still come up, it is dropped then.
  async function release(client: Client, connected: Promise<unknown>): Promise<void> {
    if (client.isReady) return client.close();
    client.destroy();
    connected.then(() => client.destroy(), () => undefined);
  }

  return createFanOutRealtime("redis", {
    async send(text) {
      const { publisher, publisherConnected } = await connections;
      await publisherConnected;
      await publisher.publish(channel, text);
    },
    listen({ onText, onResumed }) {
      let subscribed = false;
      const ready = connections.then(({ publisher, subscriber, subscriberConnected }) => {
        // node-redis subscribes again by itself on every reconnection, before "ready".
        subscriber.on("ready", () => subscribed && onResumed());
        // Events this instance published while its publisher was away are only stored: they are
        // replayed when it is back, whether or not the subscriber was away too.
        let published = false;
        publisher.on("ready", () => (published ? onResumed() : (published = true)));
        return subscriberConnected.then(() => subscriber.subscribe(channel, (text) => onText(text)));
      });
      return {
        ready: ready.then(() => void (subscribed = true)),
        async close() {
          const { publisher, subscriber, publisherConnected, subscriberConnected } = await connections;
          await Promise.allSettled([release(publisher, publisherConnected), release(subscriber, subscriberConnected)]);
        },
      };
    },
  });
};

export default driver;
