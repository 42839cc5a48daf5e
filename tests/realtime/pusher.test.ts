import { createHash, createHmac } from "node:crypto";
import { delay, http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pusher from "@/lib/realtime/drivers/pusher";
import { RealtimeNotConfiguredError, RealtimePublishError, RealtimeTimeoutError, isTransientRealtimeError } from "@/lib/realtime/errors";
import { publishWithRetry } from "@/lib/realtime/publish";
import { testRealtimeDriver } from "../contract/realtime";

const APP_ID = "4242";
const KEY = "app-key-123";
const SECRET = "pusher-secret-value-456";
const EVENTS_URL = `https://api-mt1.pusher.com/apps/${APP_ID}/events`;

interface TriggerBody {
  name: string;
  channels: string[];
  data: string;
}

/** Every trigger request the fake Pusher accepted, decoded. */
const sent: { channel: string; event: string; payload: unknown }[] = [];

/** Checks the request the way Pusher does: body MD5 and the HMAC-SHA256 query signature. */
function verifySignature(url: URL, rawBody: string): string | null {
  const params = Object.fromEntries(url.searchParams);
  if (params.auth_key !== KEY || params.auth_version !== "1.0") return "wrong auth_key or auth_version";
  if (params.body_md5 !== createHash("md5").update(rawBody).digest("hex")) return "wrong body_md5";
  const signed = Object.keys(params)
    .filter((name) => name !== "auth_signature")
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join("&");
  const expected = createHmac("sha256", SECRET).update(`POST\n${url.pathname}\n${signed}`).digest("hex");
  return params.auth_signature === expected ? null : "wrong auth_signature";
}

const acceptTrigger = http.post(EVENTS_URL, async ({ request }) => {
  const rawBody = await request.text();
  const problem = verifySignature(new URL(request.url), rawBody);
  if (problem) return HttpResponse.text(problem, { status: 401 });
  const body = JSON.parse(rawBody) as TriggerBody;
  expect(Object.keys(body).sort()).toEqual(["channels", "data", "name"]);
  expect(request.headers.get("content-type")).toBe("application/json");
  for (const channel of body.channels) sent.push({ channel, event: body.name, payload: JSON.parse(body.data) });
  return HttpResponse.json({});
});

const server = setupServer(acceptTrigger);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => {
  server.resetHandlers();
  sent.length = 0;
});
afterAll(() => server.close());

const create = (timeoutMs?: number) => pusher({ appId: APP_ID, key: KEY, secret: SECRET, cluster: "mt1", timeoutMs });

testRealtimeDriver({
  name: "pusher",
  create: () => create(),
  sent: () => sent,
  additionalTests() {
    it("pins the trigger request: signed POST to the cluster with name, channels and JSON data", async () => {
      const payload = { message: "✖ TypeError: fetch failed", projectId: "p1", type: "backend-error", source: "backend-dev" };
      await create().publish("p1-errors", "error-notification", payload);
      expect(sent).toEqual([{ channel: "p1-errors", event: "error-notification", payload }]);
    });
  },
});

describe("pusher driver failures", () => {
  it("refuses to start without credentials", () => {
    expect(() => pusher({ appId: APP_ID, key: KEY, secret: "", cluster: "mt1" })).toThrow(RealtimeNotConfiguredError);
    expect(() => pusher({ appId: APP_ID, key: KEY, secret: SECRET })).toThrow(RealtimeNotConfiguredError);
  });

  it("maps an upstream 5xx to a transient error without leaking the signed URL or secret", async () => {
    server.use(http.post(EVENTS_URL, () => HttpResponse.text("Internal error", { status: 500 })));
    const error = await create().publish("p1-errors", "e", {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RealtimePublishError);
    expect(error).toMatchObject({ upstreamStatus: 500, status: 502, code: "realtime_publish_failed" });
    expect(isTransientRealtimeError(error)).toBe(true);
    expect((error as Error).message).not.toMatch(/auth_signature|auth_key/);
    expect((error as Error).message).not.toContain(SECRET);
  });

  it("maps 413 to a permanent failure", async () => {
    server.use(http.post(EVENTS_URL, () => HttpResponse.text("Request Entity Too Large", { status: 413 })));
    const error = await create().publish("p1-errors", "e", {}).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ upstreamStatus: 413 });
    expect(isTransientRealtimeError(error)).toBe(false);
  });

  it("maps a network failure to a transient error", async () => {
    server.use(http.post(EVENTS_URL, () => HttpResponse.error()));
    const error = await create().publish("p1-errors", "e", {}).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ upstreamStatus: undefined, code: "realtime_publish_failed" });
    expect(isTransientRealtimeError(error)).toBe(true);
  });

  it("gives up on a stalled request after its timeout", async () => {
    server.use(
      http.post(EVENTS_URL, async () => {
        await delay("infinite");
        return HttpResponse.json({});
      }),
    );
    await expect(create(20).publish("p1-errors", "e", {})).rejects.toBeInstanceOf(RealtimeTimeoutError);
  });

  it("is retried once by publishWithRetry after a transient failure", async () => {
    let calls = 0;
    server.use(
      http.post(EVENTS_URL, async (info) => {
        calls += 1;
        if (calls === 1) return HttpResponse.text("busy", { status: 503 });
        return acceptTrigger.run(info).then((result) => result?.response);
      }),
    );
    expect(await publishWithRetry(create(), "p1-errors", "e", { n: 1 }, { retryDelayMs: 0 })).toBe(true);
    expect(calls).toBe(2);
    expect(sent).toEqual([{ channel: "p1-errors", event: "e", payload: { n: 1 } }]);
  });
});
