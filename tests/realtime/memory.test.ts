import { describe, expect, it } from "vitest";
import memory from "@/lib/realtime/drivers/memory";
import type { RealtimeMessage } from "@/lib/realtime/types";
import { testRealtimeDriver } from "./contract";

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

describe("memory driver: resuming with Last-Event-ID", () => {
  const channel = "project-errors";

  async function publishNumbers(realtime: ReturnType<typeof memory>, count: number): Promise<string[]> {
    const ids: string[] = [];
    const stop = realtime.subscribe(channel, (message) => ids.push(message.id));
    for (let n = 1; n <= count; n += 1) await realtime.publish(channel, "e", n);
    stop();
    return ids;
  }

  function replay(realtime: ReturnType<typeof memory>, afterId: string): unknown[] {
    const payloads: unknown[] = [];
    realtime.subscribe(channel, (message) => payloads.push(message.payload), { afterId })();
    return payloads;
  }

  it("replays only the messages after the given id, in order", async () => {
    const realtime = memory({});
    const ids = await publishNumbers(realtime, 5);
    expect(replay(realtime, ids[2])).toEqual([4, 5]);
    expect(replay(realtime, ids[4])).toEqual([]);
  });

  it("replays everything retained for an id of another instance, within historySize", async () => {
    const realtime = memory({ historySize: 3 });
    await publishNumbers(realtime, 5);
    expect(replay(realtime, "0000aaaa-2")).toEqual([3, 4, 5]);
  });

  it("forgets the least recently published channel beyond maxChannels", async () => {
    const realtime = memory({ maxChannels: 2 });
    for (const name of ["a-errors", "b-errors", "a-errors", "c-errors"]) await realtime.publish(name, "e", name);
    const retained = (name: string) => {
      const payloads: unknown[] = [];
      realtime.subscribe(name, (message) => payloads.push(message.payload), { afterId: "foreign-0" })();
      return payloads;
    };
    expect(retained("a-errors")).toEqual(["a-errors", "a-errors"]);
    expect(retained("b-errors")).toEqual([]);
    expect(retained("c-errors")).toEqual(["c-errors"]);
  });
});
