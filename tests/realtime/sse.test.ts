import { afterEach, describe, expect, it, vi } from "vitest";
import memory from "@/lib/realtime/drivers/memory";
import pusher from "@/lib/realtime/drivers/pusher";
import { RealtimeNotConfiguredError } from "@/lib/realtime/errors";
import { createSseResponse } from "@/lib/realtime/sse";
import { SseReader, eventsOf } from "./sse-client";

const channel = "project-1-errors";

function open(options: { lastEventId?: string; heartbeatMs?: number } = {}) {
  const realtime = memory({});
  const abort = new AbortController();
  const response = createSseResponse({ realtime, channel, signal: abort.signal, ...options });
  return { realtime, abort, response, reader: new SseReader(response.body as ReadableStream<Uint8Array>) };
}

describe("createSseResponse", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers text/event-stream, greets, then streams each event with id, name and JSON data", async () => {
    const { realtime, response, reader } = open();
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(await reader.next()).toEqual({ retry: "3000", comments: ["connected"] });
    await realtime.publish(channel, "error-notification", { message: "line 1\nline 2" });
    await realtime.publish("other-errors", "error-notification", { message: "not ours" });
    const frame = await reader.next();
    expect(frame).toEqual({ id: expect.stringMatching(/-1$/), event: "error-notification", data: '{"message":"line 1\\nline 2"}', comments: [] });
  });

  it("sends a heartbeat comment every heartbeatMs", async () => {
    vi.useFakeTimers();
    const { reader } = open({ heartbeatMs: 1000 });
    await reader.next();
    vi.advanceTimersByTime(2000);
    expect(await reader.next()).toEqual({ comments: ["heartbeat"] });
    expect(await reader.next()).toEqual({ comments: ["heartbeat"] });
  });

  it("ends the stream and unsubscribes when the client disconnects", async () => {
    const { realtime, abort, reader } = open();
    await reader.next();
    expect(realtime.listenerCount(channel)).toBe(1);
    abort.abort();
    expect(await reader.rest()).toEqual([]);
    expect(realtime.listenerCount(channel)).toBe(0);
    await realtime.publish(channel, "error-notification", {});
  });

  it("unsubscribes when the body is cancelled", async () => {
    const { realtime, reader } = open();
    await reader.next();
    await reader.cancel();
    expect(realtime.listenerCount(channel)).toBe(0);
  });

  it("replays what a reconnecting client missed after its Last-Event-ID", async () => {
    const first = open();
    await first.reader.next();
    await first.realtime.publish(channel, "error-notification", { n: 1 });
    const seen = await first.reader.next();
    await first.realtime.publish(channel, "error-notification", { n: 2 });
    first.abort.abort();
    const abort = new AbortController();
    const response = createSseResponse({ realtime: first.realtime, channel, signal: abort.signal, lastEventId: seen?.id });
    const reader = new SseReader(response.body as ReadableStream<Uint8Array>);
    await reader.next();
    abort.abort();
    expect(eventsOf(await reader.rest())).toEqual([{ event: "error-notification", payload: { n: 2 } }]);
  });

  it("disconnects a client that stops reading instead of queueing without bound", async () => {
    const { realtime, reader } = open();
    for (let n = 0; n < 1100; n += 1) await realtime.publish(channel, "error-notification", { n });
    expect(realtime.listenerCount(channel)).toBe(0);
    const frames = await reader.rest();
    expect(eventsOf(frames).length).toBeGreaterThan(900);
    expect(eventsOf(frames).length).toBeLessThan(1100);
  });

  it("refuses a driver that cannot deliver in-process", () => {
    const realtime = pusher({ appId: "1", key: "k", secret: "s", cluster: "eu" });
    expect(() => createSseResponse({ realtime, channel, signal: new AbortController().signal })).toThrow(RealtimeNotConfiguredError);
  });
});
