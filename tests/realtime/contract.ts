import { describe, expect, it } from "vitest";
import { RealtimeInvalidNameError, RealtimePayloadTooLargeError } from "@/lib/realtime/errors";
import { MAX_EVENT_DATA_BYTES } from "@/lib/realtime/limits";
import type { Realtime, RealtimeMessage } from "@/lib/realtime/types";

export interface RealtimeDriverContract {
  name: string;
  create: () => Realtime;
  /** Events the driver actually sent (for drivers without `subscribe`). */
  sent?: () => { channel: string; event: string; payload: unknown }[];
  additionalTests?: () => void;
}

/** The behaviour every realtime driver must have; each driver's test file calls this once. */
export function testRealtimeDriver(contract: RealtimeDriverContract): void {
  describe(`realtime driver contract: ${contract.name}`, () => {
    const channel = "3f1c2b9e-0d2a-4c55-9a3e-5b7d2f1e8c11-errors";

    async function publishAndObserve(realtime: Realtime, payload: unknown): Promise<unknown[]> {
      const received: RealtimeMessage[] = [];
      const unsubscribe = realtime.subscribe?.(channel, (message) => received.push(message));
      await realtime.publish(channel, "error-notification", payload);
      unsubscribe?.();
      if (realtime.subscribe) return received.map((message) => message.payload);
      return (contract.sent?.() ?? []).map((event) => event.payload);
    }

    it("publishes a payload unchanged", async () => {
      const payload = { message: "✖ Error: x", projectId: "p", nested: { quote: '"', emoji: "😀" } };
      expect(await publishAndObserve(contract.create(), payload)).toEqual([payload]);
    });

    it("accepts data exactly at the size limit", async () => {
      // Two bytes for the quotes of the JSON string.
      const payload = "x".repeat(MAX_EVENT_DATA_BYTES - 2);
      expect(await publishAndObserve(contract.create(), payload)).toEqual([payload]);
    });

    it("rejects data over the limit instead of dropping it silently", async () => {
      const realtime = contract.create();
      const payload = { message: "é".repeat(MAX_EVENT_DATA_BYTES / 2) };
      await expect(realtime.publish(channel, "error-notification", payload)).rejects.toBeInstanceOf(RealtimePayloadTooLargeError);
    });

    it.each([
      ["channel with a space", "my channel", "error-notification"],
      ["channel over 200 characters", "c".repeat(201), "error-notification"],
      ["empty event", channel, ""],
      ["event with a slash", channel, "error/notification"],
    ])("rejects a %s", async (_name, badChannel, event) => {
      await expect(contract.create().publish(badChannel, event, {})).rejects.toBeInstanceOf(RealtimeInvalidNameError);
    });

    it("stops delivering after unsubscribe when it can subscribe", async () => {
      const realtime = contract.create();
      if (!realtime.subscribe) {
        expect(realtime.subscribe).toBeUndefined();
        return;
      }
      const received: RealtimeMessage[] = [];
      const unsubscribe = realtime.subscribe(channel, (message) => received.push(message));
      await realtime.publish(channel, "a", 1);
      unsubscribe();
      await realtime.publish(channel, "b", 2);
      expect(received.map((message) => message.event)).toEqual(["a"]);
    });

    contract.additionalTests?.();
  });
}
