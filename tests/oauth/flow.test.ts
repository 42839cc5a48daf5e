import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as disconnectRoute } from "@/app/api/backend/managed/disconnect/route";
import { SESSION_COOKIE } from "@/lib/auth";
import { BACKEND_DEV_SERVER_ROLE } from "@/lib/cloud/backend-dev-server";
import { OAUTH_STATE_TTL_MS } from "@/lib/cloud/oauth";
import { reloadConfig } from "@/lib/config";
import { APP_DIR, findProcessesByRole } from "@/lib/sandbox";
import { getCredentials } from "@/lib/store/credentials";
import { getLatestOperation } from "@/lib/store/operations";
import { getProject, type Project } from "@/lib/store/projects";
import { clickAuthorize } from "../backend/emulator-fixture";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { createTestUser } from "../helpers/users";
import { createBrowser, type Page } from "./browser";
import { startProductServer } from "./product-server";

// The product on embedded defaults served over HTTP: the management API and the consent page
// are the emulator mounted at <PUBLIC_BASE_URL>/emulator, exactly as after `npm start`.
let fx: CloudFixture;
let product: Awaited<ReturnType<typeof startProductServer>>;

const cookieOf = (token: string) => `${SESSION_COOKIE}=${token}`;
const ownerBrowser = () => createBrowser(product.url, cookieOf(fx.owner.token));
const connectUrl = (project: Project) => `${product.url}/backend/connect?projectId=${project.id}`;
const dashboardOf = (project: Project) => `${product.url}/projects/${project.id}`;
const stateOf = async (project: Project) => (await getProject(fx.db, project.id))?.backendProject ?? null;
const errorOf = (page: Page) => (JSON.parse(page.body) as { error: { code: string; message: string } }).error;

/** Starts a connect as the owner and clicks "Authorize": the callback URL, not yet visited. */
async function authorizedCallback(project: Project): Promise<URL> {
  const consent = await ownerBrowser().visit(connectUrl(project));
  expect(consent.status).toBe(200);
  return clickAuthorize(consent.url);
}

beforeAll(async () => {
  fx = await startCloudFixture();
  product = await startProductServer();
  process.env.PUBLIC_BASE_URL = product.url;
  delete process.env.PROVISION_HOST;
  reloadConfig();
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await product.close();
  await fx.close();
});

describe("OAuth connect, end to end over HTTP", () => {
  it("follows connect → consent page → callback → dashboard and runs the enable steps in the sandbox", async () => {
    const project = await fx.newProject();
    const browser = ownerBrowser();
    const consent = await browser.visit(connectUrl(project));
    expect(consent.status).toBe(200);
    const authorize = new URL(consent.url);
    expect(authorize.origin + authorize.pathname).toBe(`${product.url}/emulator/dashboard/oauth/authorize/team`);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${product.url}/backend/callback`);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("state")).toMatch(/^[\w-]{43}\.[0-9a-z]+\.[\w-]{43}$/);
    expect(authorize.search).not.toContain(project.id);

    const done = await browser.submitForm(consent);
    expect(done.visited.some((url) => url.startsWith(`${product.url}/backend/callback?code=`))).toBe(true);
    expect(done.url).toBe(`${dashboardOf(project)}?backend=connected`);
    expect(done.status).toBe(200);

    const state = await stateOf(project);
    expect(state).toMatchObject({ kind: "connected", teamSlug: "local-team", deploymentUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    const credentials = await getCredentials(fx.db, project.id);
    expect(credentials).toMatchObject({ mode: "oauth", userId: fx.owner.user.id, backendProjectId: expect.any(Number) });
    expect(credentials!.accessToken).toMatch(/^team:local-team\|.+/);
    const raw = JSON.stringify((await fx.db.query("select * from backend_project_credentials where project_id = $1", [project.id])).rows);
    expect(raw).not.toContain(credentials!.accessToken!.split("|")[1]);
    expect((await getLatestOperation(fx.db, project.id))?.kind).toBe("oauth");

    const sandbox = await fx.sandboxOf(project);
    expect(JSON.parse(await sandbox.files.read(`${APP_DIR}/convex.json`))).toEqual({ functions: "convex/" });
    expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).toBe(`EXPO_PUBLIC_CONVEX_URL=${credentials!.deploymentUrl}\n`);
    expect((await sandbox.commands.run("git log -1 --format=%s", { cwd: APP_DIR })).stdout).toBe("Enable Convex cloud backend\n");
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("answers 400 to a tampered state and provisions nothing; the genuine state still works", async () => {
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    const state = callback.searchParams.get("state")!;
    const [nonce, expiry, mac] = state.split(".");
    const flip = (text: string) => (text[0] === "A" ? "B" : "A") + text.slice(1);
    const forgeries = [flip(state), `${nonce}.${(parseInt(expiry, 36) + 3_600_000).toString(36)}.${mac}`, `${nonce}.${expiry}.${flip(mac)}`, "not-a-state"];
    for (const forged of forgeries) {
      const tampered = new URL(callback);
      tampered.searchParams.set("state", forged);
      const page = await ownerBrowser().visit(tampered.toString());
      expect(page.status).toBe(400);
      expect(errorOf(page)).toMatchObject({ code: "invalid_oauth_state", message: expect.stringContaining("not one this service issued") });
    }
    expect(await stateOf(project)).toBeNull();
    expect(await fx.emulatedProjects(project)).toBe(0);

    expect((await ownerBrowser().visit(callback.toString())).url).toBe(`${dashboardOf(project)}?backend=connected`);
  });

  it("refuses a replayed callback: the state is single-use", async () => {
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    expect((await ownerBrowser().visit(callback.toString())).url).toBe(`${dashboardOf(project)}?backend=connected`);
    const replay = await ownerBrowser().visit(callback.toString());
    expect(replay.status).toBe(400);
    expect(errorOf(replay).message).toContain("already used");
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("refuses an expired state", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    vi.setSystemTime(Date.now() + OAUTH_STATE_TTL_MS + 1000);
    const page = await ownerBrowser().visit(callback.toString());
    expect(page.status).toBe(400);
    expect(errorOf(page)).toMatchObject({ code: "invalid_oauth_state", message: expect.stringContaining("expired") });
    expect(await stateOf(project)).toBeNull();
    expect(await fx.emulatedProjects(project)).toBe(0);
  });

  it("refuses another user's state without using it up, and asks for authentication", async () => {
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    const intruder = await createTestUser(fx.db, "Intruder");
    const foreign = await createBrowser(product.url, cookieOf(intruder.token)).visit(callback.toString());
    expect(foreign.status).toBe(400);
    expect(errorOf(foreign).message).toContain("another user");
    const anonymous = await createBrowser(product.url, null).visit(callback.toString());
    expect(anonymous.status).toBe(401);
    expect(await stateOf(project)).toBeNull();

    expect((await ownerBrowser().visit(callback.toString())).url).toBe(`${dashboardOf(project)}?backend=connected`);
  });

  it("sends a declined consent back to the dashboard with a message and leaves the state untouched", async () => {
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    const denied = new URL(`${product.url}/backend/callback`);
    denied.searchParams.set("error", "access_denied");
    denied.searchParams.set("state", callback.searchParams.get("state")!);
    const page = await ownerBrowser().visit(denied.toString());
    const landed = new URL(page.url);
    expect(landed.pathname).toBe(`/projects/${project.id}`);
    expect(landed.searchParams.get("backend_error")).toBe("access_denied");
    expect(landed.searchParams.get("backend_error_message")).toContain("denied");
    expect(await stateOf(project)).toBeNull();
    expect(await fx.emulatedProjects(project)).toBe(0);
    expect((await ownerBrowser().visit(callback.toString())).status).toBe(400);
  });

  it("reports a failed code exchange on the dashboard URL without touching the state", async () => {
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    callback.searchParams.set("code", "wrong-code");
    const landed = new URL((await ownerBrowser().visit(callback.toString())).url);
    expect(landed.searchParams.get("backend_error")).toBe("backend_api_error");
    expect(landed.searchParams.get("backend_error_message")).toContain("exchange the OAuth code");
    expect(await stateOf(project)).toBeNull();
  });

  it("records a failed provisioning as the project's failed state and reports it", async () => {
    const project = await fx.newProject();
    const callback = await authorizedCallback(project);
    await fx.db.query("update emulator_teams set project_quota = (select count(*) from emulator_projects p where p.team_id = emulator_teams.id) where slug = 'local-team'");
    try {
      const landed = new URL((await ownerBrowser().visit(callback.toString())).url);
      expect(landed.searchParams.get("backend_error")).toBe("project_quota_reached");
      expect(await stateOf(project)).toMatchObject({ kind: "failed", errorMessage: expect.stringContaining("ProjectQuotaReached") });
    } finally {
      await fx.db.query("update emulator_teams set project_quota = null where slug = 'local-team'");
    }
  });

  it("disconnects an OAuth project but refuses to delete the user's own backend project", async () => {
    const project = await fx.newProject();
    await ownerBrowser().submitForm(await ownerBrowser().visit(connectUrl(project)));
    const disconnect = (body: object) =>
      disconnectRoute(
        new Request(`${product.url}/api/backend/managed/disconnect`, {
          method: "POST",
          headers: { ...fx.owner.headers, "content-type": "application/json" },
          body: JSON.stringify({ projectId: project.id, ...body }),
        }),
        undefined,
      );
    const refused = await disconnect({ deleteBackendProject: true });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.code).toBe("oauth_project_not_deletable");
    expect(await stateOf(project)).toMatchObject({ kind: "connected" });

    expect(await (await disconnect({})).json()).toEqual({ success: true });
    expect(await stateOf(project)).toBeNull();
    expect(await getCredentials(fx.db, project.id)).toBeNull();
    expect(await findProcessesByRole(await fx.sandboxOf(project), BACKEND_DEV_SERVER_ROLE)).toHaveLength(0);
    expect(await fx.emulatedProjects(project)).toBe(1);
  });
});
