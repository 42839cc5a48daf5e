import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { GET as errorStreamRoute } from "@/app/api/projects/[id]/errors/stream/route";
import { processSingleton } from "@/lib/singletons";
import { registerDrainStep, shutDown } from "@/lib/shutdown";
import { getStore } from "@/lib/store";
import { insertProject } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";
import { SseReader } from "../realtime/sse-client";

/** A listener whose requests are answered only when the test says so; `arrived` settles at the first. */
async function startHeldServer() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const server = http.createServer((_request, response) => {
    arrive();
    void released.then(() => response.end("done"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release, arrived };
}

const refused = (url: string) => fetch(url).then(() => false, () => true);

describe("graceful shutdown", () => {
  it("stops accepting connections, lets the in-flight request finish, runs the drain steps in order past a failing one, then closes the singletons", async () => {
    const { server, url, release, arrived } = await startHeldServer();
    const inFlight = fetch(url).then((response) => response.text());
    await arrived;
    const events: string[] = [];
    processSingleton("shutdown-test", () => "value", { close: () => void events.push("singletons closed") });
    registerDrainStep("first", async () => void events.push("first"));
    registerDrainStep("failing", async () => {
      events.push("failing");
      throw new Error("this step fails");
    });
    registerDrainStep("last", async () => void events.push("last"));

    const shutdown = shutDown({ server, drainMs: 60_000 });
    expect(await refused(url)).toBe(true);
    expect(events).toEqual([]);
    release();
    expect(await inFlight).toBe("done");
    await shutdown;
    expect(events).toEqual(["first", "failing", "last", "singletons closed"]);
  });

  it("closes the connections of requests still running after the drain bound", async () => {
    const { server, url, arrived } = await startHeldServer();
    const inFlight = fetch(url).then(() => "answered", () => "connection closed");
    await arrived;
    const steps: string[] = [];
    registerDrainStep("after the bound", async () => void steps.push("ran"));

    await shutDown({ server, drainMs: 100 });
    expect(await inFlight).toBe("connection closed");
    expect(steps).toEqual(["ran"]);
    expect(server.listening).toBe(false);
  });

  it("ends the dashboard's error streams when it starts, so they do not hold the drain", async () => {
    const db = await getStore();
    const owner = await createTestUser(db, "Owner");
    const project = await insertProject(db, { ownerId: owner.user.id, name: "Chat app" });
    const response = await errorStreamRoute(new Request(`http://localhost/api/projects/${project.id}/errors/stream`, { headers: owner.headers }), {
      params: Promise.resolve({ id: project.id }),
    });
    const reader = new SseReader(response.body!);
    expect((await reader.next())?.comments).toEqual(["connected"]);

    await shutDown({ drainMs: 60_000 });
    expect(await reader.rest()).toEqual([]);
  });
});
