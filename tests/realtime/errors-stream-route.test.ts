import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/projects/[id]/errors/stream/route";
import { createErrorReporter } from "@/lib/devlog";
import { createProject } from "@/lib/projects";
import { getRealtime } from "@/lib/realtime";
import type { MemoryRealtime } from "@/lib/realtime/drivers/memory";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";
import { SseReader, eventsOf } from "./sse-client";

let owner: Awaited<ReturnType<typeof createTestUser>>;
let stranger: Awaited<ReturnType<typeof createTestUser>>;
let project: Project;

beforeAll(async () => {
  const db = await getStore();
  owner = await createTestUser(db, "Owner");
  stranger = await createTestUser(db, "Stranger");
  project = await createProject(db, owner.user.id, "Chat app");
});

function openStream(headers: Record<string, string>, projectId = project.id) {
  const abort = new AbortController();
  const request = new Request(`http://localhost/api/projects/${projectId}/errors/stream`, { headers, signal: abort.signal });
  return { abort, response: GET(request, { params: Promise.resolve({ id: projectId }) }) };
}

describe("GET /api/projects/:id/errors/stream", () => {
  it("answers 401 without credentials and 404 for someone else's or an unknown project", async () => {
    const anonymous = await openStream({}).response;
    expect(anonymous.status).toBe(401);
    const foreign = await openStream(stranger.headers).response;
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual({ error: { code: "project_not_found", message: "Project not found." } });
    const unknown = await openStream(owner.headers, crypto.randomUUID()).response;
    expect(unknown.status).toBe(404);
  });

  it("streams exactly the errors scanned from the dev server's output, then unsubscribes on disconnect", async () => {
    const { abort, response } = openStream(owner.headers);
    const opened = await response;
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = new SseReader(opened.body as ReadableStream<Uint8Array>);
    expect((await reader.next())?.comments).toEqual(["connected"]);

    const reporter = createErrorReporter({ projectId: project.id, source: "backend-dev" });
    const output = [
      "- Preparing Convex functions...",
      "\u001b[31m✖\u001b[39m Error: Unable to start push to https://happy-animal-123.convex.cloud",
      "✔ 13:28:03 Convex functions ready! (8.35s)",
      "Failed to analyze messages.js: Uncaught ReferenceError: foo is not defined",
      "    at <anonymous> (../convex/messages.ts:3:0)",
      "5/21/2025, 1:06:13 PM [CONVEX Q(messages:list)] [LOG] 'fetched 20 messages'",
      "",
    ].join("\n");
    // Split mid-line and mid-escape, as a process's output arrives.
    reporter.write(output.slice(0, 50));
    reporter.write(output.slice(50));
    await reporter.flush();
    reporter.write('✘ [ERROR] Could not resolve "./lib"\n');
    await reporter.close();

    const realtime = getRealtime() as MemoryRealtime;
    const channel = `private-${project.id}-errors`;
    expect(realtime.listenerCount(channel)).toBe(1);
    abort.abort();
    const events = eventsOf(await reader.rest());
    expect(realtime.listenerCount(channel)).toBe(0);

    const base = { id: expect.stringMatching(/^[0-9]+$/), projectId: project.id, source: "backend-dev", timestamp: expect.any(String) };
    const unresolved = { fingerprint: expect.stringMatching(/^[0-9a-f]{24}$/), firstSeenAt: expect.any(String), resolvedAt: null };
    const [first] = events;
    expect(events).toEqual([
      {
        event: "error-notification",
        payload: { ...base, ...unresolved, type: "backend-error", kind: "push", message: "✖ Error: Unable to start push to https://happy-animal-123.convex.cloud" },
      },
      // The successful push between the two errors resolves the first.
      {
        event: "error-notification",
        payload: {
          ...base,
          type: "resolved",
          message: expect.stringMatching(/^✔ 13:28:03 Convex .* ready! \(8\.35s\)$/),
          resolvedAt: expect.any(String),
          resolves: [(first.payload as { fingerprint: string }).fingerprint],
        },
      },
      {
        event: "error-notification",
        payload: {
          ...base,
          ...unresolved,
          type: "backend-error",
          kind: "push",
          file: "convex/messages.ts",
          line: 3,
          message: [
            "Failed to analyze messages.js: Uncaught ReferenceError: foo is not defined",
            "    at <anonymous> (../convex/messages.ts:3:0)",
          ].join("\n"),
        },
      },
      {
        event: "error-notification",
        payload: { ...base, ...unresolved, type: "build-error", kind: "bundle", message: '✘ [ERROR] Could not resolve "./lib"' },
      },
    ]);
  });
});
