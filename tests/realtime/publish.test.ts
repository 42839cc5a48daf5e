import { afterEach, describe, expect, it, vi } from "vitest";
import { RealtimePayloadTooLargeError, RealtimePublishError, RealtimeTimeoutError } from "@/lib/realtime/errors";
import { publishWithRetry } from "@/lib/realtime/publish";
import type { Realtime } from "@/lib/realtime/port";

/** A driver whose publish fails with the given errors in turn, then succeeds. */
function failingDriver(...failures: Error[]) {
  const attempts: unknown[] = [];
  const realtime: Realtime = {
    name: "fake",
    async publish(_channel, _event, payload) {
      attempts.push(payload);
      const failure = failures.shift();
      if (failure) throw failure;
    },
  };
  return { realtime, attempts };
}

describe("publishWithRetry", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("delivers on the first try without waiting", async () => {
    const { realtime, attempts } = failingDriver();
    expect(await publishWithRetry(realtime, "c", "e", 1)).toBe(true);
    expect(attempts).toHaveLength(1);
  });

  it("waits retryDelayMs, then retries a transient failure once", async () => {
    vi.useFakeTimers();
    const { realtime, attempts } = failingDriver(new RealtimeTimeoutError(10));
    const result = publishWithRetry(realtime, "c", "e", 1, { retryDelayMs: 500 });
    await vi.advanceTimersByTimeAsync(499);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toBe(true);
    expect(attempts).toHaveLength(2);
  });

  it("gives up after the second failure and resolves false instead of throwing", async () => {
    const { realtime, attempts } = failingDriver(new RealtimePublishError(503, "down"), new RealtimePublishError(503, "down"));
    expect(await publishWithRetry(realtime, "c", "e", 1, { retryDelayMs: 0 })).toBe(false);
    expect(attempts).toHaveLength(2);
  });

  it.each([
    ["too large", new RealtimePayloadTooLargeError(20_000, 10_000)],
    ["a 4xx answer", new RealtimePublishError(401, "bad signature")],
    ["an unknown error", new Error("bug")],
  ])("does not retry %s", async (_name, failure) => {
    const { realtime, attempts } = failingDriver(failure);
    expect(await publishWithRetry(realtime, "c", "e", 1, { retryDelayMs: 0 })).toBe(false);
    expect(attempts).toHaveLength(1);
  });
});
