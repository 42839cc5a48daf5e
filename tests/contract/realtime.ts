import { afterEach, describe, expect, it } from "vitest";
import { RealtimeInvalidNameError, RealtimePayloadTooLargeError } from "@/lib/realtime/errors";
import { MAX_EVENT_DATA_BYTES } from "@/lib/realtime/limits";
import type { Realtime, RealtimeMessage } from "@/lib/realtime/port";

export interface RealtimeDriverContract {
  name: string;
  create: () => Realtime;
  /** Events the driver actually sent (for drivers without `subscribe`). */
  sent?: () => { channel: string; event: string; payload: unknown }[];
  /** Whether instances from `create` share one bus, as several servers' would (fan-out drivers). */
  sharedBus?: boolean;
  additionalTests?: () => void;
}

/** A listener that keeps what it gets; `received(n)` resolves once it has `n` messages. */
export function collectMessages() {
  const messages: RealtimeMessage[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  return {
    messages,
    listener(message: RealtimeMessage) {
      messages.push(message);
      for (const waiter of waiters.filter((candidate) => messages.length >= candidate.count)) waiter.resolve();
    },
    received(count: number): Promise<void> {
      if (messages.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
  };
}

/**
 * The behaviour every realtime driver must have; each driver's test file calls this once.
 * Delivery may be asynchronous (fan-out drivers deliver what comes back from their bus), so
 * tests wait for the messages they expect instead of reading right after `publish`.
 */
export function testRealtimeDriver(contract: RealtimeDriverContract): void {
  describe(`realtime driver contract: ${contract.name}`, () => {
    const channel = "3f1c2b9e-0d2a-4c55-9a3e-5b7d2f1e8c11-errors";
    const created: Realtime[] = [];
    const create = (): Realtime => {
      const realtime = contract.create();
      created.push(realtime);
      return realtime;
    };

    afterEach(async () => {
      await Promise.all(created.splice(0).map((realtime) => realtime.close?.()));
    });

    async function publishAndObserve(realtime: Realtime, payload: unknown): Promise<unknown[]> {
      if (!realtime.subscribe) {
        await realtime.publish(channel, "error-notification", payload);
        return (contract.sent?.() ?? []).map((event) => event.payload);
      }
      const collector = collectMessages();
      const unsubscribe = realtime.subscribe(channel, collector.listener);
      await realtime.ready?.();
      await realtime.publish(channel, "error-notification", payload);
      await collector.received(1);
      unsubscribe();
      return collector.messages.map((message) => message.payload);
    }

    it("publishes a payload unchanged", async () => {
      const payload = { message: "✖ Error: x", projectId: "p", nested: { quote: '"', emoji: "😀" } };
      expect(await publishAndObserve(create(), payload)).toEqual([payload]);
    });

    it("accepts data exactly at the size limit", async () => {
      // Two bytes for the quotes of the JSON string.
      const payload = "x".repeat(MAX_EVENT_DATA_BYTES - 2);
      expect(await publishAndObserve(create(), payload)).toEqual([payload]);
    });

    it("rejects data over the limit instead of dropping it silently", async () => {
      const realtime = create();
      const payload = { message: "é".repeat(MAX_EVENT_DATA_BYTES / 2) };
      await expect(realtime.publish(channel, "error-notification", payload)).rejects.toBeInstanceOf(RealtimePayloadTooLargeError);
    });

    it.each([
      ["channel with a space", "my channel", "error-notification"],
      ["channel over 200 characters", "c".repeat(201), "error-notification"],
      ["empty event", channel, ""],
      ["event with a slash", channel, "error/notification"],
    ])("rejects a %s", async (_name, badChannel, event) => {
      await expect(create().publish(badChannel, event, {})).rejects.toBeInstanceOf(RealtimeInvalidNameError);
    });

    it("stops delivering after unsubscribe when it can subscribe", async () => {
      const realtime = create();
      if (!realtime.subscribe) {
        expect(realtime.subscribe).toBeUndefined();
        return;
      }
      const leaving = collectMessages();
      // Still subscribed: once it has "b", "b" has been delivered wherever it would go.
      const staying = collectMessages();
      const unsubscribe = realtime.subscribe(channel, leaving.listener);
      realtime.subscribe(channel, staying.listener);
      await realtime.ready?.();
      await realtime.publish(channel, "a", 1);
      await leaving.received(1);
      unsubscribe();
      await realtime.publish(channel, "b", 2);
      await staying.received(2);
      expect(leaving.messages.map((message) => message.event)).toEqual(["a"]);
      expect(staying.messages.map((message) => message.event)).toEqual(["a", "b"]);
    });

    if (contract.sharedBus) it("delivers every instance's events to every instance's subscribers, each once", async () => {
      const [first, second] = [create(), create()];
      const onFirst = collectMessages();
      const onSecond = collectMessages();
      first.subscribe?.(channel, onFirst.listener);
      second.subscribe?.(channel, onSecond.listener);
      await Promise.all([first.ready?.(), second.ready?.()]);
      await first.publish(channel, "error-notification", { from: "first" });
      await second.publish(channel, "error-notification", { from: "second" });
      await Promise.all([onFirst.received(2), onSecond.received(2)]);
      // A marker after both: anything delivered twice would have arrived before it.
      await first.publish(channel, "end", null);
      await Promise.all([onFirst.received(3), onSecond.received(3)]);
      for (const { messages } of [onFirst, onSecond]) {
        expect(messages.map((message) => message.payload)).toEqual([{ from: "first" }, { from: "second" }, null]);
      }
      expect(onSecond.messages.map((message) => message.id)).toEqual(onFirst.messages.map((message) => message.id));
    });

    contract.additionalTests?.();
  });
}
