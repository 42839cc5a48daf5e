import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject } from "@/lib/projects";
import redis from "@/lib/realtime/drivers/redis";
import type { FanOutRealtime } from "@/lib/realtime/fan-out";
import { buildErrorNotification } from "@/lib/realtime";
import { errorNotificationSource, sendErrorNotification } from "@/lib/realtime/error-notifications";
import { createSseResponse } from "@/lib/realtime/sse";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { describeWithRedis } from "../helpers/redis";
import { TEST_REDIS_URL } from "../helpers/redis-url";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";
import { createTestUser } from "../helpers/users";
import { SseReader, type SseFrame } from "./sse-client";

// Issue 36: an SSE stream open while its Redis goes away keeps its heartbeats, and gets what was
// published during and after the outage once Redis is back, in order and once each. Redis is
// reached through a proxy the test cuts (the machine's Redis itself is shared).

const HEARTBEAT_MS = 200;

let proxy: TcpProxy;
let realtime: FanOutRealtime;
let project: Project;

describeWithRedis("an SSE stream across a Redis outage", () => {
  beforeAll(async () => {
    const target = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const url = new URL(TEST_REDIS_URL);
    url.port = String(proxy.port);
    realtime = redis({ url: url.toString(), redisChannel: `realtime-outage-${crypto.randomUUID()}`, clientName: `outage-${crypto.randomUUID().slice(0, 8)}` });
    await realtime.ready();
    const db = await getStore();
    const owner = await createTestUser(db);
    project = await createProject(db, owner.user.id, "outage");
  });
  afterAll(async () => {
    await realtime?.close();
    await proxy?.close();
  });

  const notify = async (message: string) => {
    const stored = await sendErrorNotification(buildErrorNotification({ projectId: project.id, type: "runtime-error", source: "app-dev", message }), {
      db: await getStore(),
      realtime,
      retryDelayMs: 50,
    });
    expect(stored).not.toBeNull();
    return stored!.id;
  };
  const messageOf = (frame: SseFrame) => (JSON.parse(frame.data!) as { message: string }).message;

  it("keeps the heartbeats during the outage; the events of during and after it arrive once each, in order; the publisher is not held up", async () => {
    const abort = new AbortController();
    const response = createSseResponse({ source: errorNotificationSource(await getStore(), project.id, realtime), signal: abort.signal, heartbeatMs: HEARTBEAT_MS });
    const reader = new SseReader(response.body!);
    try {
      expect((await reader.next())?.comments).toEqual(["connected"]);
      const before = await notify("before the outage");
      const untilBefore = await reader.until((frame) => frame.id === before);
      expect(untilBefore.filter((frame) => frame.event).map(messageOf)).toEqual(["before the outage"]);

      const resumed = new Promise<void>((resolve) => realtime.onResumed(resolve));
      await proxy.cut();
      // Published while Redis is away: stored, and the publish gives up at once instead of waiting
      // in node-redis's offline queue for the connection (this await would last the whole outage).
      const during = await notify("during the outage");
      // The stream stays alive: three heartbeats in a row, and nothing else, while Redis is still away.
      let frames = 0;
      const whileAway = await reader.until(() => ++frames === 3);
      expect(whileAway.map((frame) => frame.comments)).toEqual([["heartbeat"], ["heartbeat"], ["heartbeat"]]);

      await proxy.restore();
      await resumed;
      const after = await notify("after the outage");
      const caughtUp = await reader.until((frame) => frame.id === after);
      const events = caughtUp.filter((frame) => frame.event);
      expect(events.map((frame) => frame.id)).toEqual([during, after]);
      expect(events.map(messageOf)).toEqual(["during the outage", "after the outage"]);

      // Nothing is sent twice later either: the next event is the only one that follows.
      const last = await notify("last");
      const tail = await reader.until((frame) => frame.id === last);
      expect(tail.filter((frame) => frame.event).map((frame) => frame.id)).toEqual([last]);
    } finally {
      abort.abort();
      await reader.rest();
    }
  });
});
