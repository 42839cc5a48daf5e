import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { parseJsonBody, readBodyWithin, route } from "@/lib/http";

// Issue 36: how reading a request body ends when the client does not behave.

const MB = 1024 * 1024;
const encode = (text: string) => new TextEncoder().encode(text);
const postOf = (body: ReadableStream<Uint8Array>) =>
  new Request("http://localhost/x", { method: "POST", headers: { "content-type": "application/json" }, body, duplex: "half" } as RequestInit);

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("reading a request body", () => {
  it("gives up a stalled body (408) even when cancelling its source never settles", async () => {
    let cancelled = false;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encode('{"name":'));
      },
      cancel() {
        cancelled = true;
        return new Promise<void>(() => undefined);
      },
    });
    await expect(readBodyWithin(postOf(stalled), MB, { idleTimeoutMs: 200 })).rejects.toMatchObject({ status: 408, code: "body_timeout" });
    expect(cancelled).toBe(true);
  });

  it("gives up a body that keeps trickling at the total deadline (408), though it never pauses for the idle time", async () => {
    let timer: NodeJS.Timeout | undefined;
    const trickling = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(encode(" ")), 20);
      },
      cancel() {
        clearInterval(timer);
      },
    });
    await expect(readBodyWithin(postOf(trickling), MB, { idleTimeoutMs: 5_000, totalTimeoutMs: 300 })).rejects.toMatchObject({
      status: 408,
      code: "body_timeout",
      message: expect.stringContaining("still arriving"),
    });
    clearInterval(timer);
  });

  it("answers a client that went away mid-body with 400 body_incomplete, logged at info, not a 500", async () => {
    vi.stubEnv("LOG_LEVEL", "info");
    const lines: { level: string; message: string }[] = [];
    const collect = (line: string) => void lines.push(JSON.parse(line) as { level: string; message: string });
    vi.spyOn(console, "log").mockImplementation(collect);
    vi.spyOn(console, "error").mockImplementation(collect);
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encode('{"name":"hal'));
        setTimeout(() => controller.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" })), 10);
      },
    });
    const handler = route(async (request: Request) => Response.json(await parseJsonBody(request, z.object({ name: z.string() }))));
    const response = await handler(postOf(broken), undefined);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "body_incomplete", message: expect.any(String) } });
    expect(lines.map((line) => line.level)).toEqual(["info"]);
    expect(lines[0].message).toContain("before it was complete");
  });
});
