import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BackendApiError, DEFAULT_RETRY_DELAY_MS, withRetries } from "@/lib/backend";

const transient = () => new BackendApiError("Failed: 503", { operation: "op", upstreamStatus: 503, upstreamCode: "OptimisticConcurrencyControlFailure" });
const final = () => new BackendApiError("Failed: 400", { operation: "op", upstreamStatus: 400 });

describe("withRetries", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits the fixed 500 ms default between attempts and returns the first success", async () => {
    const attempt = vi.fn().mockRejectedValueOnce(transient()).mockRejectedValueOnce(transient()).mockResolvedValue("ok");
    const result = withRetries("op", attempt);
    await vi.advanceTimersByTimeAsync(0);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(DEFAULT_RETRY_DELAY_MS - 1);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempt).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(DEFAULT_RETRY_DELAY_MS);
    await expect(result).resolves.toBe("ok");
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it("makes maxRetries attempts in all and rethrows the last error", async () => {
    const errors = [transient(), transient(), transient(), transient()];
    let index = 0;
    const attempt = vi.fn(() => Promise.reject(errors[index++]));
    const result = withRetries("op", attempt, { maxRetries: 3, retryDelay: 100 });
    const settled = expect(result).rejects.toBe(errors[2]);
    await vi.advanceTimersByTimeAsync(200);
    await settled;
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it("never retries other 4xx or errors that are not backend errors", async () => {
    const rejectFinal = vi.fn().mockRejectedValue(final());
    await expect(withRetries("op", rejectFinal)).rejects.toMatchObject({ upstreamStatus: 400 });
    expect(rejectFinal).toHaveBeenCalledTimes(1);
    const bug = vi.fn().mockRejectedValue(new TypeError("bug"));
    await expect(withRetries("op", bug)).rejects.toThrow("bug");
    expect(bug).toHaveBeenCalledTimes(1);
  });

  it("stops waiting when the signal aborts", async () => {
    const controller = new AbortController();
    const attempt = vi.fn().mockRejectedValue(transient());
    const result = withRetries("op", attempt, { signal: controller.signal });
    const settled = expect(result).rejects.toThrow("stop");
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(new Error("stop"));
    await settled;
    expect(attempt).toHaveBeenCalledTimes(1);
  });
});
