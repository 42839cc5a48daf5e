import { expect, it } from "vitest";
import memory from "@/lib/realtime/drivers/memory";
import type { RealtimeMessage } from "@/lib/realtime/port";
import { testRealtimeDriver } from "../contract/realtime";

testRealtimeDriver({
  name: "memory",
  create: () => memory({}),
  additionalTests() {
    const channel = "project-errors";

    it("fans out to every subscriber of the channel and to no other channel", async () => {
      const realtime = memory({});
      const first: RealtimeMessage[] = [];
      const second: RealtimeMessage[] = [];
      const other: RealtimeMessage[] = [];
      realtime.subscribe(channel, (message) => first.push(message));
      realtime.subscribe(channel, (message) => second.push(message));
      realtime.subscribe("other-errors", (message) => other.push(message));
      await realtime.publish(channel, "error-notification", { n: 1 });
      expect(first).toEqual([{ id: expect.any(String), channel, event: "error-notification", payload: { n: 1 } }]);
      expect(second).toEqual(first);
      expect(other).toEqual([]);
    });

    it("keeps delivering when one listener throws", async () => {
      const realtime = memory({});
      const received: unknown[] = [];
      realtime.subscribe(channel, () => {
        throw new Error("broken listener");
      });
      realtime.subscribe(channel, (message) => received.push(message.payload));
      await realtime.publish(channel, "e", "still delivered");
      expect(received).toEqual(["still delivered"]);
    });

    it("counts listeners and forgets a channel when the last one leaves", () => {
      const realtime = memory({});
      const stopFirst = realtime.subscribe(channel, () => {});
      const stopSecond = realtime.subscribe(channel, () => {});
      expect(realtime.listenerCount(channel)).toBe(2);
      stopFirst();
      stopFirst();
      expect(realtime.listenerCount(channel)).toBe(1);
      stopSecond();
      expect(realtime.listenerCount(channel)).toBe(0);
    });
  },
});
