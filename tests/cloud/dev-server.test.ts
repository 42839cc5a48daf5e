import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as devStartRoute } from "@/app/api/backend/dev/start/route";
import { GET as statusRoute } from "@/app/api/backend/status/route";
import { BACKEND_DEV_SERVER_ROLE, stopBackendDevServer } from "@/lib/cloud/backend-dev-server";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { restoreBackendEnvToSandbox } from "@/lib/cloud/restore";
import { APP_DEV_SERVER_ROLE } from "@/lib/dev-servers";
import { APP_DIR, findProcessesByRole, SANDBOX_HOME, type Sandbox } from "@/lib/sandbox";
import { getProject, type Project } from "@/lib/store/projects";
import { eventsOf } from "../realtime/sse-client";
import { startCloudFixture, type CloudFixture } from "./fixture";
import { afterSandboxStart, openProjectSandbox } from "@/lib/workspace";

// A stand-in backend CLI: a success line, a two-line error split across writes, a look-alike;
// then, each time the test drops a trigger file, the next error. Triggers (not timers) order the
// groups, so the 500 ms grouping can never merge them.
const FAKE_DEV = `
const fs = require("fs");
const out = (text) => process.stdout.write(text);
const after = (file, then) => { const t = setInterval(() => { if (fs.existsSync(file)) { clearInterval(t); then(); } }, 20); };
for (const file of ["trigger-1", "trigger-2"]) fs.rmSync(file, { force: true });
out("\\u001b[32m✔\\u001b[39m 12:00:00 Convex functions ready! (1.2s)\\n");
out("\\u001b[31m✖\\u001b[39m Error: Unable to push deployment con");
out("fig\\n    at backend/schema.ts:3:7\\n");
out("errorHandler.ts compiled with 0 errors\\n");
after("trigger-1", () => {
  process.stderr.write("backend/messages.ts(4,1): error TS2304: Cannot find name 'foo'.\\n");
  after("trigger-2", () => out("SENTINEL Error: done\\n"));
});
setInterval(() => {}, 1 << 30);
`;

let fx: CloudFixture;
let project: Project;
let sandbox: Sandbox;

const json = (init: RequestInit = {}) => ({ ...init, headers: { ...fx.owner.headers, "content-type": "application/json" } });

beforeAll(async () => {
  fx = await startCloudFixture({ BACKEND_DEV_COMMAND: `node ${SANDBOX_HOME}/fake-backend-dev.js` });
  project = await fx.newProject();
  sandbox = await fx.sandboxOf(project);
  await sandbox.files.write(`${SANDBOX_HOME}/fake-backend-dev.js`, FAKE_DEV);
  await enableCloudBackend(project, openProjectSandbox);
  // Stopping publishes what the enable-time server still buffered, before any test subscribes.
  await stopBackendDevServer(sandbox);
  project = (await getProject(fx.db, project.id))!;
});
afterAll(async () => {
  delete process.env.BACKEND_DEV_COMMAND;
  await fx.close();
});

describe("backend dev server", () => {
  it("streams exactly the scanned errors to the project's SSE channel", async () => {
    const { reader, close } = await fx.openErrorStream(project);

    const started = await devStartRoute(
      new Request("http://localhost/api/backend/dev/start", json({ method: "POST", body: JSON.stringify({ projectId: project.id }) })),
      undefined,
    );
    expect(await started.json()).toEqual({ success: true });

    type Event = { event: string; payload: { message: string; type: string; source: string; projectId: string } };
    const nextEvent = async (): Promise<Event> => {
      for (;;) {
        const frame = await reader.next();
        if (!frame) throw new Error("the stream ended");
        const [event] = eventsOf([frame]) as Event[];
        if (event) return event;
      }
    };
    // The new run's first success resolves what the enable-time run left unresolved (its ✖ error).
    const resolution = await nextEvent();
    expect(resolution.payload).toMatchObject({ type: "resolved", message: "✔ 12:00:00 Convex functions ready! (1.2s)" });
    const events = [await nextEvent()];
    await sandbox.files.write(`${APP_DIR}/trigger-1`, "");
    events.push(await nextEvent());
    await sandbox.files.write(`${APP_DIR}/trigger-2`, "");
    events.push(await nextEvent());
    await close();

    expect(events.map((e) => e.event)).toEqual(["error-notification", "error-notification", "error-notification"]);
    expect(events.map((e) => e.payload.message)).toEqual([
      "✖ Error: Unable to push deployment config\n    at backend/schema.ts:3:7",
      "backend/messages.ts(4,1): error TS2304: Cannot find name 'foo'.",
      "SENTINEL Error: done",
    ]);
    for (const { payload } of events) expect(payload).toMatchObject({ projectId: project.id, source: "backend-dev" });
    expect(events[1].payload.type).toBe("build-error");
    // The push it reported: ready, then the ✖ failure mark; what followed carried no outcome.
    const status = await (await statusRoute(new Request(`http://localhost/api/backend/status?projectId=${project.id}`, { headers: fx.owner.headers }), undefined)).json();
    expect(status.backendPush).toEqual({ state: "failed", at: expect.any(String) });
  });

  it("never leaves two backend dev servers and reports status", async () => {
    const start = () =>
      devStartRoute(new Request("http://localhost/api/backend/dev/start", json({ method: "POST", body: JSON.stringify({ projectId: project.id }) })), undefined);
    await start();
    await start();
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);

    const status = async () =>
      (await statusRoute(new Request(`http://localhost/api/backend/status?projectId=${project.id}`, { headers: fx.owner.headers }), undefined)).json();
    expect(await status()).toEqual({
      backendProject: expect.objectContaining({ kind: "connected" }),
      backendDevServer: "running",
      // Where the stand-in's output has got to by now: before, at or after its success and failure marks.
      backendPush: { state: expect.stringMatching(/^(pushing|pushed|failed)$/), at: expect.any(String) },
      missingSandboxWiring: [],
    });
    await stopBackendDevServer(sandbox);
    expect(await status()).toMatchObject({ backendDevServer: "stopped", backendPush: null });
  });

  it("refuses to start the dev server of a project without a backend", async () => {
    const other = await fx.newProject();
    const response = await devStartRoute(
      new Request("http://localhost/api/backend/dev/start", json({ method: "POST", body: JSON.stringify({ projectId: other.id }) })),
      undefined,
    );
    expect(response.status).toBe(409);
    expect((await response.json()).error.code).toBe("backend_not_connected");
  });

  it("keeps .env.local across a sandbox restart, restores it when lost, and starts the dev servers again", async () => {
    const envFile = `${APP_DIR}/.env.local`;
    const before = await sandbox.files.read(envFile);
    await sandbox.restart();
    // A restart restarts processes, never files: .env.local is still there, as it was.
    expect(await sandbox.files.read(envFile)).toBe(before);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(0);
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toHaveLength(0);
    // The injected files were committed: they survive the restart and are not rewritten.
    expect(await sandbox.files.read(`${APP_DIR}/app/_layout.tsx`)).toContain("<BackendWrapper>");

    // The spec's restore operation alone, for a sandbox that lost the file: only .env.local comes back; unconnected projects answer null.
    await sandbox.files.remove(envFile);
    const restored = await restoreBackendEnvToSandbox(sandbox, project.id);
    expect(restored?.deploymentUrl).toMatch(/^https?:\/\//);
    expect(before).toContain(restored!.deploymentUrl);
    expect(await sandbox.files.read(envFile)).toBe(before);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(0);
    const unconnected = await fx.newProject();
    expect(await restoreBackendEnvToSandbox(await fx.sandboxOf(unconnected), unconnected.id)).toBeNull();
    expect(await (await fx.sandboxOf(unconnected)).files.exists(envFile)).toBe(false);

    await sandbox.files.remove(envFile);
    const result = await afterSandboxStart(sandbox, project);
    expect(result.backendDevServer).toBe(true);
    expect(await sandbox.files.read(envFile)).toBe(before);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toHaveLength(1);
    expect((await fetch(result.previewUrl)).status).toBeLessThan(500);
  });
});
