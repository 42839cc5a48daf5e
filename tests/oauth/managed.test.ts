import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as connectRoute } from "@/app/api/backend/managed/connect/route";
import { POST as disconnectRoute } from "@/app/api/backend/managed/disconnect/route";
import { BACKEND_DEV_SERVER_ROLE } from "@/lib/cloud/backend-dev-server";
import { connectManagedBackend, enableCloudBackend } from "@/lib/cloud/enable";
import { backendProjectNameFor } from "@/lib/backend";
import { APP_DEV_SERVER_ROLE } from "@/lib/dev-servers";
import { APP_DIR, findProcessesByRole } from "@/lib/sandbox";
import { getCredentials } from "@/lib/store/credentials";
import { getProject, type Project } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { createTestUser } from "../helpers/users";
import { openProjectSandbox } from "@/lib/workspace";

let fx: CloudFixture;

const post = (handler: typeof connectRoute, path: string, body: object, headers = fx.owner.headers) =>
  handler(
    new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );
const connect = (projectId: string, headers?: Record<string, string>) => post(connectRoute, "/api/backend/managed/connect", { projectId }, headers);
const disconnect = (body: { projectId: string; deleteBackendProject?: boolean }, headers?: Record<string, string>) =>
  post(disconnectRoute, "/api/backend/managed/disconnect", body, headers);
const stateOf = async (project: Project) => (await getProject(fx.db, project.id))?.backendProject ?? null;

/** Projects the emulator's built-in team holds right now. */
async function teamProjectCount(): Promise<number> {
  const { rows } = await fx.db.query<{ count: number }>(
    "select count(*)::int as count from emulator_projects p join emulator_teams t on t.id = p.team_id where t.slug = 'local-team'",
  );
  return rows[0].count;
}

beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

describe("POST /api/backend/managed/connect", () => {
  it("provisions once, stores managed credentials and leaves the sandbox alone", async () => {
    const project = await fx.newProject();
    const response = await connect(project.id);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({
      success: true,
      deploymentUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      deploymentName: expect.any(String),
      projectSlug: expect.any(String),
      teamSlug: "local-team",
    });
    expect(JSON.stringify(body)).not.toContain("|");
    expect(await getCredentials(fx.db, project.id)).toMatchObject({ mode: "managed", accessToken: null, deploymentUrl: body.deploymentUrl });
    const sandbox = await fx.sandboxOf(project);
    expect(await sandbox.files.exists(`${APP_DIR}/convex.json`)).toBe(false);
    expect(await sandbox.files.exists(`${APP_DIR}/.env.local`)).toBe(false);

    expect(await (await connect(project.id)).json()).toEqual(body);
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("answers 404 for someone else's project and 400 for a bad body", async () => {
    const project = await fx.newProject();
    const stranger = await createTestUser(fx.db, "Stranger");
    expect((await connect(project.id, stranger.headers)).status).toBe(404);
    expect((await disconnect({ projectId: project.id }, stranger.headers)).status).toBe(404);
    expect((await post(connectRoute, "/api/backend/managed/connect", {})).status).toBe(400);
    expect((await post(disconnectRoute, "/api/backend/managed/disconnect", { projectId: project.id, deleteBackendProject: "yes" })).status).toBe(400);
    expect(await stateOf(project)).toBeNull();
  });
});

describe("POST /api/backend/managed/disconnect", () => {
  it("round-trips: disconnect clears state and credentials, a new connect adopts the kept backend project with a fresh key", async () => {
    const project = await fx.newProject();
    const first = await (await connect(project.id)).json();
    const firstKey = (await getCredentials(fx.db, project.id))!.adminKey;
    expect(await (await disconnect({ projectId: project.id })).json()).toEqual({ success: true });
    expect(await stateOf(project)).toBeNull();
    expect(await getCredentials(fx.db, project.id)).toBeNull();
    expect(await (await disconnect({ projectId: project.id })).json()).toEqual({ success: true });

    const second = await (await connect(project.id)).json();
    // Without deleteBackendProject the first backend project is kept; its deterministic name finds it again.
    expect(second.deploymentUrl).toBe(first.deploymentUrl);
    expect(await fx.emulatedProjects(project)).toBe(1);
    expect((await getCredentials(fx.db, project.id))!.adminKey).not.toBe(firstKey);
  });

  it("stops the backend dev server of an enabled project and keeps the app running", async () => {
    const project = await fx.newProject();
    await enableCloudBackend(project, openProjectSandbox);
    const sandbox = await fx.sandboxOf(project);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    expect((await disconnect({ projectId: project.id })).status).toBe(200);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(0);
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toHaveLength(1);
  });

  it("deletes the backend project and so frees quota for another project", async () => {
    const kept = await fx.newProject();
    const waiting = await fx.newProject();
    await connect(kept.id);
    await fx.db.query("update emulator_teams set project_quota = $1 where slug = 'local-team'", [await teamProjectCount()]);
    try {
      const full = await connect(waiting.id);
      expect(full.status).toBe(502);
      expect((await full.json()).error.code).toBe("project_quota_reached");

      expect(await (await disconnect({ projectId: kept.id, deleteBackendProject: true })).json()).toEqual({ success: true });
      expect(await fx.emulatedProjects(kept)).toBe(0);
      expect(await stateOf(kept)).toBeNull();

      expect((await connect(waiting.id)).status).toBe(200);
      expect(await stateOf(waiting)).toMatchObject({ kind: "connected" });
    } finally {
      await fx.db.query("update emulator_teams set project_quota = null where slug = 'local-team'");
    }
  });

  it("succeeds when the backend project was already deleted elsewhere", async () => {
    const project = await fx.newProject();
    await connect(project.id);
    await fx.db.query("delete from emulator_projects where name = $1", [backendProjectNameFor(project.id)]);
    expect((await disconnect({ projectId: project.id, deleteBackendProject: true })).status).toBe(200);
    expect(await stateOf(project)).toBeNull();
  });

  it("answers 409 while a provisioning run is live, and works once it ended", async () => {
    const project = await fx.newProject();
    let reached!: () => void;
    let release!: () => void;
    const atCreated = new Promise<void>((resolve) => (reached = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = connectManagedBackend(project, { onStep: async (step) => (step === "created" ? (reached(), gate) : undefined) });
    await atCreated;

    const refused = await disconnect({ projectId: project.id, deleteBackendProject: true });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.code).toBe("in_progress");
    expect(await stateOf(project)).toEqual({ kind: "connecting" });

    release();
    await running;
    expect(await stateOf(project)).toMatchObject({ kind: "connected" });
    expect((await disconnect({ projectId: project.id, deleteBackendProject: true })).status).toBe(200);
    expect(await fx.emulatedProjects(project)).toBe(0);
  });

  it("forgets a failed run's backend project once it is deleted, so the next run creates a new one", async () => {
    const project = await fx.newProject();
    // A run that stored credentials and then failed in the sandbox, as when .env.local cannot be written.
    await expect(
      enableCloudBackend(project, openProjectSandbox, { onStep: async (step) => (step === "credentialsStored" ? Promise.reject(new Error("sandbox went away")) : undefined) }),
    ).rejects.toThrow("sandbox went away");
    expect(await stateOf(project)).toMatchObject({ kind: "failed" });
    const failedDeployment = (await getCredentials(fx.db, project.id))!.deploymentUrl;

    expect((await disconnect({ projectId: project.id, deleteBackendProject: true })).status).toBe(200);
    expect(await fx.emulatedProjects(project)).toBe(0);
    const state = await enableCloudBackend(project, openProjectSandbox);
    expect(state.deploymentUrl).not.toBe(failedDeployment);
    expect(await fx.emulatedProjects(project)).toBe(1);
  });
});
