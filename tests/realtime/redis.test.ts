import { expect, it } from "vitest";
import redis from "@/lib/realtime/drivers/redis";
import { describeWithRedis } from "../helpers/redis";
import { TEST_REDIS_URL } from "../helpers/redis-url";
import { collectMessages, testRealtimeDriver } from "./contract";

describeWithRedis("redis realtime driver", () => {
  // A channel of this file's own, so parallel test files sharing the Redis do not meet.
  const redisChannel = `realtime-test-${crypto.randomUUID()}`;
  const create = () => redis({ url: TEST_REDIS_URL, redisChannel });

  testRealtimeDriver({
    name: "redis",
    create,
    additionalTests() {
      it("delivers every instance's events to every instance's subscribers, each once", async () => {
        const channel = "project-errors";
        const [first, second] = [create(), create()];
        try {
          const onFirst = collectMessages();
          const onSecond = collectMessages();
          first.subscribe(channel, onFirst.listener);
          second.subscribe(channel, onSecond.listener);
          await Promise.all([first.ready(), second.ready()]);
          await first.publish(channel, "error-notification", { from: "first" });
          await second.publish(channel, "error-notification", { from: "second" });
          await first.publish(channel, "end", null);
          await Promise.all([onFirst.received(3), onSecond.received(3)]);
          for (const { messages } of [onFirst, onSecond]) {
            expect(messages.map((message) => message.payload)).toEqual([{ from: "first" }, { from: "second" }, null]);
          }
        } finally {
          await Promise.all([first.close(), second.close()]);
        }
      });
    },
  });
});
