import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { subscribeToErrors, type FeedStatus } from "@/app/_components/error-subscription";
import { GET as getHistory } from "@/app/api/projects/[id]/errors/route";
import { GET as getStream } from "@/app/api/projects/[id]/errors/stream/route";
import { POST as authorizeChannel } from "@/app/api/realtime/auth/route";
import { realtimeClientSettings } from "@/app/projects/[id]/data";
import { getConfig } from "@/lib/config";
import { createProject } from "@/lib/projects";
import { buildErrorNotification, getRealtime } from "@/lib/realtime";
import { listStoredErrorNotifications, sendErrorNotification } from "@/lib/realtime/error-notifications";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { startFakePusher } from "../helpers/pusher-server";
import { startRouteServer } from "../helpers/route-server";
import { createTestUser } from "../helpers/users";
import { SseReader, eventsOf } from "./sse-client";

const PUSHER = { appId: "4242", key: "app-key-123", secret: "pusher-secret-value-456", cluster: "mt1" };

vi.hoisted(() => {
  Object.assign(process.env, {
    REALTIME_DRIVER: "pusher",
    PUSHER_APP_ID: "4242",
    PUSHER_KEY: "app-key-123",
    PUSHER_SECRET: "pusher-secret-value-456",
    PUSHER_CLUSTER: "mt1",
  });
});

let fakePusher: Awaited<ReturnType<typeof startFakePusher>>;
let routes: Awaited<ReturnType<typeof startRouteServer>>;
let owner: Awaited<ReturnType<typeof createTestUser>>;
let stranger: Awaited<ReturnType<typeof createTestUser>>;
let project: Project;

// Pusher's REST API, answered by the fake server, which delivers to its WebSocket subscribers.
const restApi = setupServer(
  http.post(`https://api-${PUSHER.cluster}.pusher.com/apps/:appId/events`, async ({ request }) => {
    const { status, body } = fakePusher.handleTrigger(new URL(request.url), await request.text());
    return new HttpResponse(body, { status, headers: { "content-type": "application/json" } });
  }),
);

beforeAll(async () => {
  restApi.listen({ onUnhandledRequest: "bypass" });
  fakePusher = await startFakePusher(PUSHER);
  routes = await startRouteServer([
    { method: "POST", pattern: /^\/api\/realtime\/auth$/, handler: authorizeChannel },
    { method: "GET", pattern: /^\/api\/projects\/(?<id>[^/]+)\/errors$/, handler: (request, context) => getHistory(request, context as never) },
  ]);
  const db = await getStore();
  owner = await createTestUser(db, "Owner");
  stranger = await createTestUser(db, "Stranger");
  project = await createProject(db, owner.user.id, "Chat app");
});

afterAll(async () => {
  restApi.close();
  await routes.close();
  await fakePusher.close();
});

const notify = (message: string) => sendErrorNotification(buildErrorNotification({ message, projectId: project.id, type: "backend-error", source: "backend-dev" }));

/** The dashboard's subscription, pointed at the fake server and at the routes served over HTTP. */
function subscribeAs(headers: Record<string, string>) {
  const settings = realtimeClientSettings(getConfig(), project.id);
  if (settings.transport !== "pusher") throw new Error("expected the pusher settings");
  const statuses: FeedStatus[] = [];
  const payloads: unknown[] = [];
  const unsubscribe = subscribeToErrors(
    { ...settings, authEndpoint: `${routes.url}${settings.authEndpoint}`, historyUrl: `${routes.url}${settings.historyUrl}` },
    { onPayload: (payload) => payloads.push(payload), onStatus: (status) => statuses.push(status) },
    { headers, pusher: { wsHost: "127.0.0.1", wsPort: fakePusher.port, forceTLS: false, enabledTransports: ["ws"] } },
  );
  return { settings, statuses, payloads, unsubscribe };
}

function postAuthorization(headers: Record<string, string>, body: string, contentType = "application/x-www-form-urlencoded") {
  return authorizeChannel(new Request("http://localhost/api/realtime/auth", { method: "POST", headers: { ...headers, "content-type": contentType }, body }), undefined);
}

describe("private error channel (REALTIME_DRIVER=pusher)", () => {
  it("pusher-js joins private-<id>-errors through the authorization route, loads the history, then receives live notifications", async () => {
    const earlier = await notify("✖ Error: before the page opened");
    const { settings, statuses, payloads, unsubscribe } = subscribeAs(owner.headers);
    try {
      expect(settings.channel).toBe(`private-${project.id}-errors`);
      await vi.waitFor(() => expect(statuses.at(-1)).toBe("live"), { timeout: 30_000 });
      await vi.waitFor(() => expect(payloads).toEqual([earlier]), { timeout: 30_000 });
      expect(fakePusher.subscriberCount(settings.channel)).toBe(1);
      const live = await notify("✖ TypeError: fetch failed");
      expect(live).toMatchObject({ id: expect.stringMatching(/^[0-9]+$/), message: "✖ TypeError: fetch failed" });
      await vi.waitFor(() => expect(payloads).toEqual([earlier, live]), { timeout: 30_000 });
    } finally {
      unsubscribe();
    }
    expect(fakePusher.refused).toEqual([]);
  });

  it("knowing the project id is not enough: a non-owner's pusher-js is refused the channel", async () => {
    const { settings, statuses, payloads, unsubscribe } = subscribeAs(stranger.headers);
    try {
      await vi.waitFor(() => expect(statuses.at(-1)).toBe("offline"), { timeout: 30_000 });
      expect(fakePusher.subscriberCount(settings.channel)).toBe(0);
      await notify("✖ Error: a secret stack trace");
      expect(payloads).toEqual([]);
    } finally {
      unsubscribe();
    }
  });

  it("the authorization route: 401 without credentials, 404 for a non-owner, another channel or a public one; signs for the owner", async () => {
    const body = (channel: string) => `socket_id=123.456&channel_name=${encodeURIComponent(channel)}`;
    const channel = `private-${project.id}-errors`;
    expect((await postAuthorization({}, body(channel))).status).toBe(401);
    const foreign = await postAuthorization(stranger.headers, body(channel));
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual({ error: { code: "project_not_found", message: "Project not found." } });
    expect((await postAuthorization(owner.headers, body(`private-${crypto.randomUUID()}-errors`))).status).toBe(404);
    expect((await postAuthorization(owner.headers, body(`${project.id}-errors`))).status).toBe(404);
    expect((await postAuthorization(owner.headers, body(`presence-${project.id}-errors`))).status).toBe(404);
    expect((await postAuthorization(owner.headers, "socket_id=bad&channel_name=x")).status).toBe(400);
    expect((await postAuthorization(owner.headers, JSON.stringify({ socket_id: "1.2", channel_name: channel }), "application/json")).status).toBe(400);

    const signed = await postAuthorization(owner.headers, body(channel));
    expect(signed.status).toBe(200);
    const { auth } = (await signed.json()) as { auth: string };
    expect(auth).toMatch(new RegExp(`^${PUSHER.key}:[0-9a-f]{64}$`));
    expect(auth).not.toContain(PUSHER.secret);
  });

  it("the SSE route still streams with the pusher driver: the stored history, then live notifications; owner only", async () => {
    expect(getRealtime().name).toBe("pusher");
    const open = (headers: Record<string, string>, signal?: AbortSignal) =>
      getStream(new Request(`http://localhost/api/projects/${project.id}/errors/stream`, { headers, signal }), {
        params: Promise.resolve({ id: project.id }),
      });
    expect((await open({})).status).toBe(401);
    expect((await open(stranger.headers)).status).toBe(404);

    const stored = await notify("✖ Error: stored before the stream opened");
    const history = await listStoredErrorNotifications(await getStore(), project.id);
    expect(history.at(-1)).toEqual(stored);
    const abort = new AbortController();
    const response = await open(owner.headers, abort.signal);
    expect(response.status).toBe(200);
    const reader = new SseReader(response.body as ReadableStream<Uint8Array>);
    await reader.next();
    const replayed = [];
    for (let index = 0; index < history.length; index += 1) replayed.push(await reader.next());
    expect(replayed.map((frame) => frame?.id)).toEqual(history.map((notification) => notification.id));
    const live = await notify("✖ Error: after the stream opened");
    const next = await reader.next();
    abort.abort();
    expect(eventsOf([...replayed, next].filter((frame) => frame !== null))).toEqual(
      [...history, live].map((payload) => ({ event: "error-notification", payload })),
    );
  });
});
