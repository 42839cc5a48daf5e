import { createClient } from "@redis/client";
import { expect, it } from "vitest";
import redis from "@/lib/realtime/drivers/redis";
import { describeWithRedis } from "../helpers/redis";
import { TEST_REDIS_URL } from "../helpers/redis-url";
import { collectMessages, testRealtimeDriver } from "../contract/realtime";

describeWithRedis("redis realtime driver", () => {
  // A channel and client name of this file's own, so other users of the Redis are not touched.
  const redisChannel = `realtime-test-${crypto.randomUUID()}`;
  const clientName = `realtime-test-${crypto.randomUUID().slice(0, 8)}`;
  const create = () => redis({ url: TEST_REDIS_URL, redisChannel, clientName });

  testRealtimeDriver({
    name: "redis",
    create,
    sharedBus: true,
    additionalTests() {
      it("subscribes again after Redis drops its connection, and says so", async () => {
        const realtime = create();
        const admin = createClient({ url: TEST_REDIS_URL });
        try {
          await admin.connect();
          const collector = collectMessages();
          realtime.subscribe("project-errors", collector.listener);
          await realtime.ready();
          const resumed = new Promise<void>((resolve) => realtime.onResumed(resolve));
          // The subscribing connection is the one in pub/sub mode under our name.
          const clients = (await admin.sendCommand(["CLIENT", "LIST", "TYPE", "pubsub"])) as string;
          const ids = clients
            .split("\n")
            .filter((line) => line.includes(` name=${clientName} `))
            .map((line) => /\bid=(\d+)/.exec(line)?.[1] as string);
          expect(ids).toHaveLength(1);
          await admin.sendCommand(["CLIENT", "KILL", "ID", ids[0]]);
          await resumed;
          await realtime.publish("project-errors", "after-reconnect", 1);
          await collector.received(1);
          expect(collector.messages.map((message) => message.event)).toEqual(["after-reconnect"]);
        } finally {
          admin.destroy();
          await realtime.close();
        }
      });
    },
  });
});
