import "../helpers/real-dev-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKEND_DEV_SERVER_ROLE } from "@/lib/cloud/backend-dev-server";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { APP_DIR, findProcessesByRole, type Sandbox } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { eventsOf } from "../realtime/sse-client";
import { startCloudFixture, type CloudFixture } from "./fixture";
import { openProjectSandbox } from "@/lib/workspace";

// The local backend dev server as a user gets it: the real convex CLI's code generation and tsc.
let fx: CloudFixture;
let project: Project;
let sandbox: Sandbox;

beforeAll(async () => {
  fx = await startCloudFixture();
  project = await fx.newProject();
  await enableCloudBackend(project, openProjectSandbox);
  sandbox = await fx.sandboxOf(project);
});
afterAll(async () => {
  await fx.close();
});

type Event = { event: string; payload: { message: string; type: string; source: string; projectId: string } };

describe("the local backend dev server", () => {
  it("generates convex/_generated with the real convex CLI", async () => {
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    // Written by the first check after start; waiting on a file, not on time.
    for (let attempt = 0; !(await sandbox.files.exists(`${APP_DIR}/convex/_generated/server.d.ts`)); attempt++) {
      if (attempt > 600) throw new Error("convex/_generated was never written");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await sandbox.files.read(`${APP_DIR}/convex/_generated/api.d.ts`)).toContain("ApiFromModules");
  });

  it("reports a TypeScript error in convex/ on the project's SSE stream, naming the file", async () => {
    const { reader, close } = await fx.openErrorStream(project);
    await sandbox.files.write(
      `${APP_DIR}/convex/messages.ts`,
      'import { query } from "./_generated/server";\n\nexport const count = query({ args: {}, handler: async () => { const total: number = "many"; return total; } });\n',
    );
    let found: Event | undefined;
    while (!found) {
      const frame = await reader.next();
      if (!frame) throw new Error("the stream ended");
      found = (eventsOf([frame]) as Event[]).find((event) => event.payload.message.includes("convex/messages.ts"));
    }
    await close();
    expect(found.event).toBe("error-notification");
    expect(found.payload).toMatchObject({ projectId: project.id, source: "backend-dev" });
    expect(found.payload.message).toMatch(/convex\/messages\.ts:3:\d+ - error TS2322/);
  });
});
