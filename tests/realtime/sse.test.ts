import { afterEach, describe, expect, it, vi } from "vitest";
import { createSseResponse, type SseEvent, type SseSource } from "@/lib/realtime/sse";
import { SseReader, eventsOf } from "./sse-client";

/** A source with a stored history and live events published by the test. */
function memorySource(stored: SseEvent[] = []) {
  const listeners = new Set<(event: SseEvent) => void>();
  let releaseReplay: () => void = () => {};
  const replayGate = { held: false };
  const source: SseSource = {
    async replay(afterId) {
      if (replayGate.held) await new Promise<void>((resolve) => (releaseReplay = resolve));
      return stored.filter((event) => afterId === null || Number(event.id) > Number(afterId));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const publish = (event: SseEvent) => {
    for (const listener of [...listeners]) listener(event);
  };
  return { source, listeners, publish, replayGate, release: () => releaseReplay() };
}

const event = (id: number, data: unknown = { n: id }): SseEvent => ({ id: String(id), event: "error-notification", data });

function open(source: SseSource, options: { lastEventId?: string; heartbeatMs?: number } = {}) {
  const abort = new AbortController();
  const response = createSseResponse({ source, signal: abort.signal, ...options });
  return { abort, response, reader: new SseReader(response.body as ReadableStream<Uint8Array>) };
}

describe("createSseResponse", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers text/event-stream, greets, then streams each event with id, name and JSON data", async () => {
    const { publish, source } = memorySource();
    const { response, reader } = open(source);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(await reader.next()).toEqual({ retry: "3000", comments: ["connected"] });
    publish(event(7, { message: "line 1\nline 2" }));
    expect(await reader.next()).toEqual({ id: "7", event: "error-notification", data: '{"message":"line 1\\nline 2"}', comments: [] });
  });

  it("replays the stored events first, all of them or those after Last-Event-ID", async () => {
    const stored = [event(1), event(2), event(3)];
    const all = open(memorySource(stored).source);
    await all.reader.next();
    expect((await Promise.all([all.reader.next(), all.reader.next(), all.reader.next()])).map((frame) => frame?.id)).toEqual(["1", "2", "3"]);
    const resumed = open(memorySource(stored).source, { lastEventId: "2" });
    await resumed.reader.next();
    resumed.abort.abort();
    expect(eventsOf(await resumed.reader.rest())).toEqual([{ event: "error-notification", payload: { n: 3 } }]);
  });

  it("holds live events back until the replay is sent, and never sends one twice", async () => {
    const { source, publish, replayGate, release, listeners } = memorySource([event(1), event(2)]);
    replayGate.held = true;
    const { abort, reader } = open(source);
    await reader.next();
    await vi.waitFor(() => expect(listeners.size).toBe(1));
    // Published while the history is read: 2 is also in it, 3 is not.
    publish(event(2));
    publish(event(3));
    release();
    const frames = [await reader.next(), await reader.next(), await reader.next()];
    expect(frames.map((frame) => frame?.id)).toEqual(["1", "2", "3"]);
    publish(event(4));
    expect((await reader.next())?.id).toBe("4");
    abort.abort();
    expect(await reader.rest()).toEqual([]);
  });

  it("sends a heartbeat comment every heartbeatMs", async () => {
    vi.useFakeTimers();
    const { reader } = open(memorySource().source, { heartbeatMs: 1000 });
    await reader.next();
    vi.advanceTimersByTime(2000);
    expect(await reader.next()).toEqual({ comments: ["heartbeat"] });
    expect(await reader.next()).toEqual({ comments: ["heartbeat"] });
  });

  it("ends the stream and unsubscribes when the client disconnects", async () => {
    const { source, listeners, publish } = memorySource();
    const { abort, reader } = open(source);
    await reader.next();
    expect(listeners.size).toBe(1);
    abort.abort();
    expect(await reader.rest()).toEqual([]);
    expect(listeners.size).toBe(0);
    publish(event(1));
  });

  it("unsubscribes when the body is cancelled", async () => {
    const { source, listeners } = memorySource();
    const { reader } = open(source);
    await reader.next();
    await reader.cancel();
    expect(listeners.size).toBe(0);
  });

  it("disconnects a client that stops reading instead of queueing without bound", async () => {
    const { source, listeners, publish } = memorySource();
    const { reader } = open(source);
    await vi.waitFor(() => expect(listeners.size).toBe(1));
    for (let n = 0; n < 1100; n += 1) publish(event(n));
    await vi.waitFor(() => expect(listeners.size).toBe(0));
    const frames = await reader.rest();
    expect(eventsOf(frames).length).toBeGreaterThan(900);
    expect(eventsOf(frames).length).toBeLessThan(1100);
  });

  it("replays the history when the source reports missed live events: sends what it had not sent, once, and goes on", async () => {
    const stored: SseEvent[] = [];
    const { source, listeners, publish } = memorySource(stored);
    let interrupt: () => void = () => {};
    const interrupted: SseSource = { ...source, onInterrupted: (callback) => ((interrupt = callback), () => (interrupt = () => {})) };
    const { abort, reader } = open(interrupted);
    await reader.next();
    stored.push(event(1));
    publish(event(1));
    expect((await reader.next())?.id).toBe("1");
    // Stored while the bus was away, so never delivered live.
    stored.push(event(2), event(3));
    interrupt();
    stored.push(event(4));
    publish(event(4));
    expect([await reader.next(), await reader.next(), await reader.next()].map((frame) => frame?.id)).toEqual(["2", "3", "4"]);
    publish(event(5));
    expect((await reader.next())?.id).toBe("5");
    abort.abort();
    expect(await reader.rest()).toEqual([]);
    expect(listeners.size).toBe(0);
  });
});
