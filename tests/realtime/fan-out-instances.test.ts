import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { GET } from "@/app/api/projects/[id]/errors/stream/route";
import { reloadConfig } from "@/lib/config";
import { createProject } from "@/lib/projects";
import { resetProcessSingleton, resetProcessSingletons } from "@/lib/singletons";
import { getRealtime } from "@/lib/realtime";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { isNotification } from "../helpers/realtime-instance";
import { TEST_REDIS_URL } from "../helpers/redis-url";
import { createTestUser } from "../helpers/users";
import { SseReader, type SseFrame } from "./sse-client";

const INSTANCE_A = path.join(process.cwd(), "tests", "helpers", "realtime-instance.ts");

/** Runs instance A to its end; resolves with the events its own stream got. */
function runInstanceA(env: Record<string, string>): Promise<SseFrame[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-instance-a-"));
  const child = spawn(process.execPath, ["--import", "tsx", INSTANCE_A], {
    env: { ...process.env, ...env, DATA_DIR: dataDir, INSTANCE_ID: "instance-a" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("close", (code) => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      const line = stdout.trim().split("\n").at(-1);
      if (code === 0 && line) resolve(JSON.parse(line) as SseFrame[]);
      else reject(new Error(`Instance A ended with ${code}:\n${stderr}`));
    });
  });
}

describeWithPostgres("two instances on one PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let owner: Awaited<ReturnType<typeof createTestUser>>;

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    // This process is instance B.
    process.env.DATABASE_URL = database.url;
    reloadConfig();
    owner = await createTestUser(await getStore(), "Owner");
  });

  afterAll(async () => {
    await resetProcessSingletons();
    delete process.env.DATABASE_URL;
    delete process.env.REALTIME_DRIVER;
    delete process.env.REDIS_URL;
    await database?.drop();
  });

  function openStream(project: Project, lastEventId?: string) {
    const abort = new AbortController();
    const headers: Record<string, string> = { ...owner.headers, ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
    const request = new Request(`http://localhost/api/projects/${project.id}/errors/stream`, { headers, signal: abort.signal });
    return { abort, response: GET(request, { params: Promise.resolve({ id: project.id }) }) };
  }

  /** A scans dev-server output; streams on B and on A each get every notification once, with the stored ids. */
  async function expectEachEventOnceOnBothInstances(driverEnv: Record<string, string>): Promise<void> {
    const project = await createProject(await getStore(), owner.user.id, "Chat app", { sandbox: false });
    const { abort, response } = openStream(project);
    const reader = new SseReader((await response).body as ReadableStream<Uint8Array>);
    expect((await reader.next())?.comments).toEqual(["connected"]);
    await getRealtime().ready?.();

    const endMessage = `end ${crypto.randomUUID()}`;
    const onA = await runInstanceA({ ...driverEnv, DATABASE_URL: database.url, PROJECT_ID: project.id, END_MESSAGE: endMessage });
    const onB = (await reader.until((frame) => isNotification(frame, endMessage))).filter((frame) => frame.event);
    abort.abort();

    const summary = (frames: SseFrame[]) =>
      frames.map((frame) => {
        const { type, message } = JSON.parse(frame.data ?? "null") as { type: string; message: string };
        return { id: frame.id, event: frame.event, type, message };
      });
    const expected = [
      { type: "backend-error", message: "✖ Error: Unable to start push to https://happy-animal-123.convex.cloud" },
      { type: "resolved", message: "✔ 13:28:03 Convex functions ready! (8.35s)" },
      { type: "build-error", message: '✘ [ERROR] Could not resolve "./lib"' },
      { type: "resolved", message: endMessage },
    ].map((notification) => ({ id: expect.stringMatching(/^[0-9]+$/), event: "error-notification", ...notification }));
    expect(summary(onB)).toEqual(expected);
    expect(summary(onA)).toEqual(summary(onB));

    // The ids are the stored rows': a client reconnecting to B with the first one gets the rest.
    const resumed = openStream(project, onB[0].id);
    const resumedReader = new SseReader((await resumed.response).body as ReadableStream<Uint8Array>);
    const replayed = await resumedReader.until((frame) => isNotification(frame, endMessage));
    resumed.abort.abort();
    expect(summary(replayed.filter((frame) => frame.event))).toEqual(summary(onB).slice(1));
  }

  it("with the default driver (postgres, as DATABASE_URL is set), a stream on B gets the errors scanned on A exactly once, as does A's", { timeout: 60_000 }, async () => {
    expect(getRealtime().name).toBe("postgres");
    await expectEachEventOnceOnBothInstances({});
  });

  it.skipIf(!inject("redisAvailable"))("with REALTIME_DRIVER=redis, the same", { timeout: 60_000 }, async () => {
    process.env.REALTIME_DRIVER = "redis";
    process.env.REDIS_URL = TEST_REDIS_URL;
    reloadConfig();
    await resetProcessSingleton("realtime");
    expect(getRealtime().name).toBe("redis");
    await expectEachEventOnceOnBothInstances({ REALTIME_DRIVER: "redis", REDIS_URL: TEST_REDIS_URL });
  });
});
