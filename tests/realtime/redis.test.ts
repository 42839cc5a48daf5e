import redis from "@/lib/realtime/drivers/redis";
import { describeWithRedis } from "../helpers/redis";
import { TEST_REDIS_URL } from "../helpers/redis-url";
import { testRealtimeDriver } from "./contract";

describeWithRedis("redis realtime driver", () => {
  // A channel of this file's own, so parallel test files sharing the Redis do not meet.
  const redisChannel = `realtime-test-${crypto.randomUUID()}`;
  testRealtimeDriver({ name: "redis", create: () => redis({ url: TEST_REDIS_URL, redisChannel }), sharedBus: true });
});
