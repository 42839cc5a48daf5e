import http from "node:http";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { JSON_BODY_LIMIT_BYTES } from "@/lib/http";
import { startProductServer, type ProductServer } from "./server";

// Issue 36: the limits of the server `npm start` runs, each answered in the JSON error shape.
// A first build on two busy cores takes minutes; later runs reuse `.next`.
const START_TIMEOUT_MS = 10 * 60_000;
const STEP_TIMEOUT_MS = 90_000;
/** Short body timeouts, so a stalled or trickling body is given up within seconds, not minutes. */
const BODY_IDLE_TIMEOUT_MS = 3_000;
const BODY_TOTAL_TIMEOUT_MS = 8_000;

let server: ProductServer;
let token: string;

interface Answer {
  status: number;
  body: unknown;
}

/**
 * Sends a request whose body `send` writes at its own pace, and resolves with the server's answer
 * as soon as it arrives, whether or not the body was finished; `send` is told to stop then.
 */
function request(
  path: string,
  init: { method?: string; headers?: Record<string, string>; send?: (request: http.ClientRequest, answered: () => boolean) => Promise<void> },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = http.request(`${server.baseUrl}${path}`, { method: init.method ?? "POST", headers: init.headers, agent: false }, (response) => {
      answered = true;
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : null }));
      response.on("error", reject);
    });
    // The server may close the connection right after answering, while the body is still being written.
    outgoing.on("error", (error) => {
      if (!answered) reject(error);
    });
    if (!init.send) outgoing.end();
    else
      init.send(outgoing, () => answered).catch((error: unknown) => {
        if (!answered) reject(error as Error);
      });
  });
}

/** Resolves once `chunk` was handed to the socket (or the request is already gone). */
const write = (outgoing: http.ClientRequest, chunk: string | Buffer) =>
  new Promise<void>((resolve) => {
    if (outgoing.destroyed) return resolve();
    outgoing.write(chunk, () => resolve());
  });

/** Resolves after `ms`, or at once when the answer came (so no test waits beyond its condition). */
const pause = (ms: number, answered: () => boolean) =>
  new Promise<void>((resolve) => {
    const started = performance.now();
    const check = setInterval(() => {
      if (answered() || performance.now() - started >= ms) {
        clearInterval(check);
        resolve();
      }
    }, 50);
  });

const json = { "content-type": "application/json" };
const auth = () => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  server = await startProductServer({
    timeoutMs: START_TIMEOUT_MS,
    initialisedDatabase: inject("pgliteTemplate"),
    env: { BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_TIMEOUT_MS), BODY_TOTAL_TIMEOUT_MS: String(BODY_TOTAL_TIMEOUT_MS) },
  });
  token = /Authorization: Bearer ([^\s"]+)/.exec(server.output())![1];
}, START_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await server?.stop();
});

describe("limits of the built server, answered as JSON", { timeout: STEP_TIMEOUT_MS }, () => {
  it("a cross-origin server-action POST is a 403, not a 500", async () => {
    const answer = await request("/signin", {
      headers: { "next-action": "0123456789abcdef", origin: "http://attacker.example", "content-type": "text/plain;charset=UTF-8" },
      send: async (outgoing) => void outgoing.end("[]"),
    });
    expect(answer).toMatchObject({ status: 403, body: { error: { code: "cross_site_request" } } });
  });

  it("headers over 16 KiB are a 431", async () => {
    const answer = await request("/api/projects", { method: "GET", headers: { ...auth(), "x-padding": "p".repeat(17 * 1024) } });
    expect(answer).toMatchObject({ status: 431, body: { error: { code: "headers_too_large" } } });
    expect((await fetch(`${server.baseUrl}/api/projects`, { headers: auth() })).status).toBe(200);
  });

  it("a 5 MB JSON body is a 413 before the rest is sent, declared or not", async () => {
    // Declared: refused on its Content-Length, after the first 64 KiB of it (the rest never leaves).
    const declared = await request("/api/projects", {
      headers: { ...auth(), ...json, "content-length": String(5 * 1024 * 1024) },
      send: (outgoing) => write(outgoing, Buffer.alloc(64 * 1024, 0x20)),
    });
    expect(declared).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });

    // Chunked, no length: just past the limit, then nothing more. A server waiting for the whole
    // body would give it up as stalled (408); one counting stops at the limit (413).
    const chunked = await request("/api/projects", {
      headers: { ...auth(), ...json },
      send: async (outgoing, answered) => {
        for (let sent = 0; sent <= JSON_BODY_LIMIT_BYTES && !answered(); sent += 64 * 1024) await write(outgoing, Buffer.alloc(64 * 1024, 0x20));
      },
    });
    expect(chunked).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
  });

  it("a body that stalls is a 408 after BODY_IDLE_TIMEOUT_MS", async () => {
    const started = performance.now();
    const answer = await request("/api/projects", {
      headers: { ...auth(), ...json, "content-length": "100" },
      send: (outgoing) => write(outgoing, '{"name":'),
    });
    expect(answer).toMatchObject({ status: 408, body: { error: { code: "body_timeout", message: expect.stringContaining("nothing arrived") } } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(BODY_IDLE_TIMEOUT_MS);
  });

  it("a body that trickles forever is a 408 at BODY_TOTAL_TIMEOUT_MS", async () => {
    const started = performance.now();
    const answer = await request("/api/projects", {
      headers: { ...auth(), ...json, "content-length": String(64 * 1024) },
      send: async (outgoing, answered) => {
        // A byte a second: never idle for BODY_IDLE_TIMEOUT_MS, never done.
        while (!answered() && !outgoing.destroyed) {
          await write(outgoing, " ");
          await pause(1_000, answered);
        }
      },
    });
    expect(answer).toMatchObject({ status: 408, body: { error: { code: "body_timeout", message: expect.stringContaining("still arriving") } } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(BODY_TOTAL_TIMEOUT_MS);
    expect((await fetch(`${server.baseUrl}/api/health`)).status).toBe(200);
    expect(server.output()).not.toMatch(/uncaughtException|unhandledRejection|unhandled error in route/);
  });
});
