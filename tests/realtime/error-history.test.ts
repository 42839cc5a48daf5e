import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getHistory } from "@/app/api/projects/[id]/errors/route";
import { GET as getStream } from "@/app/api/projects/[id]/errors/stream/route";
import { createProject } from "@/lib/projects";
import { buildErrorNotification } from "@/lib/realtime";
import memory from "@/lib/realtime/drivers/memory";
import {
  ERROR_HISTORY_SIZE,
  errorNotificationSource,
  listStoredErrorNotifications,
  sendErrorNotification,
  type StoredErrorNotification,
} from "@/lib/realtime/error-notifications";
import { createSseResponse } from "@/lib/realtime/sse";
import { getStore, openStore, type Sql } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";
import { SseReader, eventsOf, type SseFrame } from "./sse-client";

let owner: Awaited<ReturnType<typeof createTestUser>>;
let stranger: Awaited<ReturnType<typeof createTestUser>>;
let project: Project;
/** The 205 notifications sent, in order. */
const sent: StoredErrorNotification[] = [];

const notification = (projectId: string, index: number) =>
  buildErrorNotification({ message: `✖ Error: failure #${index}`, projectId, type: "backend-error", source: "backend-dev" });

beforeAll(async () => {
  const db = await getStore();
  owner = await createTestUser(db, "Owner");
  stranger = await createTestUser(db, "Stranger");
  project = await createProject(db, owner.user.id, "Chat app");
  for (let index = 0; index < 205; index += 1) {
    const stored = await sendErrorNotification(notification(project.id, index));
    if (!stored) throw new Error(`notification ${index} was not stored`);
    sent.push(stored);
  }
});

/** Opens the stream and reads `count` events, then disconnects and reads what is left. */
async function readStream(headers: Record<string, string>, count: number): Promise<SseFrame[]> {
  const abort = new AbortController();
  const request = new Request(`http://localhost/api/projects/${project.id}/errors/stream`, { headers, signal: abort.signal });
  const response = await getStream(request, { params: Promise.resolve({ id: project.id }) });
  expect(response.status).toBe(200);
  const reader = new SseReader(response.body as ReadableStream<Uint8Array>);
  const frames: SseFrame[] = [];
  while (frames.length < count) {
    const frame = await reader.next();
    if (frame === null) break;
    if (frame.event) frames.push(frame);
  }
  abort.abort();
  return [...frames, ...(await reader.rest())];
}

describe("error notification history", () => {
  it("keeps the last 200 of a project, in order, with increasing ids", async () => {
    expect(ERROR_HISTORY_SIZE).toBe(200);
    const stored = await listStoredErrorNotifications(await getStore(), project.id);
    expect(stored).toEqual(sent.slice(5));
    const ids = stored.map((item) => BigInt(item.id));
    expect(ids.every((id, index) => index === 0 || id > ids[index - 1])).toBe(true);
  });

  it("replays exactly the last 200 to a new SSE subscriber, oldest first, with the row ids as event ids", async () => {
    const frames = await readStream(owner.headers, 200);
    expect(eventsOf(frames)).toEqual(sent.slice(5).map((payload) => ({ event: "error-notification", payload })));
    expect(frames.map((frame) => frame.id)).toEqual(sent.slice(5).map((item) => item.id));
  });

  it("replays only the later ones after Last-Event-ID", async () => {
    const frames = await readStream({ ...owner.headers, "last-event-id": sent[199].id }, 5);
    expect(eventsOf(frames).map((event) => event.payload)).toEqual(sent.slice(200));
  });

  it("serves the same history as JSON for clients that subscribe elsewhere (pusher-js); owner only", async () => {
    const get = (headers: Record<string, string>) =>
      getHistory(new Request(`http://localhost/api/projects/${project.id}/errors`, { headers }), { params: Promise.resolve({ id: project.id }) });
    expect((await get({})).status).toBe(401);
    expect((await get(stranger.headers)).status).toBe(404);
    const response = await get(owner.headers);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ notifications: sent.slice(5) });
  });
});

describe("error notification ids across a restart", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-error-history-"));
  let db: Sql;
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("a Last-Event-ID from before the store was reopened still resumes right after it", async () => {
    db = await openStore({ dataDir });
    const user = await createTestUser(db, "Restart");
    const restarted = await createProject(db, user.user.id, "Restart app");
    const realtime = memory({});
    const before: StoredErrorNotification[] = [];
    for (let index = 0; index < 3; index += 1) {
      const stored = await sendErrorNotification(notification(restarted.id, index), { db, realtime });
      if (stored) before.push(stored);
    }
    expect(before).toHaveLength(3);
    await db.close();

    db = await openStore({ dataDir });
    const after = await sendErrorNotification(notification(restarted.id, 3), { db, realtime: memory({}) });
    expect(BigInt(after?.id ?? 0)).toBeGreaterThan(BigInt(before[2].id));
    const abort = new AbortController();
    const response = createSseResponse({
      source: errorNotificationSource(db, restarted.id, memory({})),
      signal: abort.signal,
      lastEventId: before[0].id,
    });
    const reader = new SseReader(response.body as ReadableStream<Uint8Array>);
    const frames = [await reader.next(), await reader.next(), await reader.next(), await reader.next()];
    abort.abort();
    expect(eventsOf(frames.filter((frame): frame is SseFrame => frame !== null))).toEqual(
      [before[1], before[2], after].map((payload) => ({ event: "error-notification", payload })),
    );
  });
});
