import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as enableRoute } from "@/app/api/cloud/enable/route";
import { BACKEND_PACKAGE_RANGE } from "@/lib/app-names";
import { DEFAULT_MAX_RETRIES } from "@/lib/backend";
import { reloadConfig } from "@/lib/config";
import { BACKEND_DEV_SERVER_ROLE } from "@/lib/cloud/backend-dev-server";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { APP_DEV_SERVER_ROLE } from "@/lib/dev-servers";
import { APP_DIR, findProcessesByRole } from "@/lib/sandbox";
import { getCredentials } from "@/lib/store/credentials";
import { getLatestOperation } from "@/lib/store/operations";
import { getProject, type Project } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "./fixture";
import { openProjectSandbox } from "@/lib/workspace";

let fx: CloudFixture;

const enable = (projectId: string, headers = fx.owner.headers) =>
  enableRoute(
    new Request("http://localhost/api/cloud/enable", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ projectId }),
    }),
    undefined,
  );

const stateOf = async (project: Project) => (await getProject(fx.db, project.id))?.backendProject;

/** How long one enable may take while a second suite loads the machine. */
const LOADED_ENABLE_MS = 300_000;

beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

describe("POST /api/cloud/enable", () => {
  it("injects, provisions, stores, writes env, commits and starts both dev servers", async () => {
    const project = await fx.newProject();
    const response = await enable(project.id);
    const text = await response.text();
    expect(response.status).toBe(200);
    const body = JSON.parse(text);
    expect(body).toEqual({ success: true, deploymentUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });

    const sandbox = await fx.sandboxOf(project);
    expect(JSON.parse(await sandbox.files.read(`${APP_DIR}/convex.json`))).toEqual({ functions: "convex/" });
    for (const file of ["schema.ts", "auth.config.ts", "http.ts", "tsconfig.json"]) {
      expect(await sandbox.files.exists(`${APP_DIR}/convex/${file}`)).toBe(true);
    }
    const layout = await sandbox.files.read(`${APP_DIR}/app/_layout.tsx`);
    expect(layout).toMatch(/<BackendWrapper>\s*<ThemeProvider/);
    expect(layout).toContain("process.env.EXPO_PUBLIC_CONVEX_URL");
    expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).toBe(`EXPO_PUBLIC_CONVEX_URL=${body.deploymentUrl}\n`);

    // The app depends on convex, installed: Metro and the convex CLI resolve it from the app.
    const appDir = fx.hostPath(project, APP_DIR);
    expect(JSON.parse(await sandbox.files.read(`${APP_DIR}/package.json`)).dependencies.convex).toBe(BACKEND_PACKAGE_RANGE);
    expect(createRequire(path.join(appDir, "package.json")).resolve("convex/react")).toContain(path.join(appDir, "node_modules", "convex"));

    const log = await sandbox.commands.run("git log -1 --format=%s && git show --name-only --format= HEAD && git status --porcelain", { cwd: APP_DIR });
    const [subject, ...committed] = log.stdout.trim().split("\n");
    expect(subject).toBe("Enable Convex cloud backend");
    expect(committed).toEqual(expect.arrayContaining(["package.json", "package-lock.json", "convex.json", "convex/schema.ts", "app/_layout.tsx"]));

    const state = await stateOf(project);
    expect(state).toMatchObject({ kind: "connected", deploymentUrl: body.deploymentUrl, teamSlug: expect.any(String) });
    expect(state).not.toHaveProperty("warningMessage");

    const credentials = await getCredentials(fx.db, project.id);
    expect(credentials).toMatchObject({ mode: "managed", deploymentUrl: body.deploymentUrl, backendProjectId: expect.any(Number) });
    // The v1 deploy key of the deployment (`dev:<deployment>|…`), never the team token.
    expect(credentials!.adminKey).toMatch(new RegExp(`^dev:${credentials!.deploymentName}\\|.+`));
    const raw = await fx.db.query("select * from backend_project_credentials where project_id = $1", [project.id]);
    expect(JSON.stringify(raw.rows)).not.toContain(credentials!.adminKey.split("|")[1]);
    expect(text).not.toContain(credentials!.adminKey.split("|")[1]);

    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toHaveLength(1);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("returns the stored URL and does nothing else when already connected", async () => {
    const project = await fx.newProject();
    const first = await (await enable(project.id)).json();
    const operation = await getLatestOperation(fx.db, project.id);
    const again = await enable(project.id);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(first);
    expect((await getLatestOperation(fx.db, project.id))?.id).toBe(operation?.id);
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("answers 503 before touching anything when the team token or slug is missing", async () => {
    const project = await fx.newProject();
    process.env.BACKEND_PROVIDER = "hosted";
    reloadConfig();
    try {
      const response = await enable(project.id);
      expect(response.status).toBe(503);
      expect((await response.json()).error.code).toBe("backend_not_configured");
    } finally {
      process.env.BACKEND_PROVIDER = "local";
      reloadConfig();
    }
    const sandbox = await fx.sandboxOf(project);
    expect(await sandbox.files.exists(`${APP_DIR}/convex.json`)).toBe(false);
    expect(await stateOf(project)).toBeNull();
    expect(await getLatestOperation(fx.db, project.id)).toBeNull();
  });

  it("answers 401 without a caller and 404 for someone else's project", async () => {
    const project = await fx.newProject();
    expect((await enable(project.id, {})).status).toBe(401);
    const { createTestUser } = await import("../helpers/users");
    const stranger = await createTestUser(fx.db, "Stranger");
    expect((await enable(project.id, stranger.headers)).status).toBe(404);
    expect(await stateOf(project)).toBeNull();
  });

  it("records failed with the quota message when the plan limit is reached", async () => {
    const project = await fx.newProject();
    fx.emulator.emulator.faults.add({ path: "create_project", status: 400, code: "ProjectQuotaReached", message: "Team has reached its project limit" });
    const response = await enable(project.id);
    expect(response.status).toBe(502);
    const body = await response.json();
    expect(body.error.message).toContain("ProjectQuotaReached");
    expect(await stateOf(project)).toEqual({ kind: "failed", errorMessage: body.error.message });
    expect(await fx.emulatedProjects(project)).toBe(0);
  });

  it("retries a 5xx or 429 blip on create and provision inside the run, creating one project", async () => {
    const project = await fx.newProject();
    fx.emulator.emulator.faults.add({ path: "create_project", status: 503 });
    fx.emulator.emulator.faults.add({ path: "create_deploy_key", status: 429, code: "RateLimited" });
    const response = await enable(project.id);
    expect(response.status).toBe(200);
    expect(await stateOf(project)).toMatchObject({ kind: "connected" });
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("retries a provision that timed out inside the run", async () => {
    const project = await fx.newProject();
    process.env.BACKEND_API_TIMEOUT_MS = "5000";
    reloadConfig();
    try {
      fx.emulator.emulator.faults.add({ path: "create_deploy_key", hang: true });
      expect((await enable(project.id)).status).toBe(200);
    } finally {
      delete process.env.BACKEND_API_TIMEOUT_MS;
      reloadConfig();
    }
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("records failed when a 5xx outlasts the retries, and a retry reuses the project already created", async () => {
    const project = await fx.newProject();
    fx.emulator.emulator.faults.add({ path: "create_deploy_key", status: 500, times: DEFAULT_MAX_RETRIES });
    const failed = await enable(project.id);
    expect(failed.status).toBe(502);
    expect(await stateOf(project)).toMatchObject({ kind: "failed", errorMessage: expect.any(String) });
    expect(await fx.emulatedProjects(project)).toBe(1);

    const retried = await enable(project.id);
    expect(retried.status).toBe(200);
    expect(await stateOf(project)).toMatchObject({ kind: "connected" });
    expect(await fx.emulatedProjects(project)).toBe(1);
  });

  it("provisions once for 20 concurrent enables", { timeout: LOADED_ENABLE_MS + 120_000 }, async () => {
    const project = await fx.newProject();
    // The 19 that find the run going wait for it; a loaded machine (a CI run beside others) took
    // longer than the product's 60 s, and they answered 409 in_progress as a request that gives up does.
    process.env.PROVISIONING_WAIT_MS = String(LOADED_ENABLE_MS);
    reloadConfig();
    const responses = await Promise.all(Array.from({ length: 20 }, () => enable(project.id))).finally(() => {
      delete process.env.PROVISIONING_WAIT_MS;
      reloadConfig();
    });
    const bodies = await Promise.all(responses.map((response) => response.json()));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(new Set(bodies.map((body) => body.deploymentUrl)).size).toBe(1);
    expect(await fx.emulatedProjects(project)).toBe(1);
    const sandbox = await fx.sandboxOf(project);
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
  });

  it.each([
    ["its instance restarted (a new boot id)", "update enable_operations set owner_boot_id = gen_random_uuid() where project_id = $1"],
    [
      "its instance stopped beating",
      `with gone as (
         insert into app_instances (instance_id, boot_id, expires_at) values (gen_random_uuid()::text, gen_random_uuid(), now() - interval '1 second')
         returning instance_id, boot_id)
       update enable_operations set owner_instance_id = gone.instance_id, owner_boot_id = gone.boot_id from gone where project_id = $1`,
    ],
  ])("takes over at once, without waiting for the lease, a run whose owner is gone: %s", async (_case, ownerGone) => {
    const project = await fx.newProject();
    let reachedCreated!: () => void;
    const created = new Promise<void>((resolve) => (reachedCreated = resolve));
    void enableCloudBackend(project, openProjectSandbox, {
      leaseMs: 600_000,
      onStep: (step) => (step === "created" ? (reachedCreated(), new Promise<never>(() => undefined)) : Promise.resolve()),
    });
    await created;
    // A live owner keeps it: a request that may not wait answers 409 at once.
    await expect(enableCloudBackend(project, openProjectSandbox, { waitMs: 0 })).rejects.toMatchObject({ status: 409, code: "in_progress" });

    await fx.db.query(ownerGone, [project.id]);
    const state = await enableCloudBackend(project, openProjectSandbox, { waitMs: 0 });
    expect(state).toMatchObject({ kind: "connected" });
    expect(await fx.emulatedProjects(project)).toBe(1);
    expect((await getLatestOperation(fx.db, project.id))?.status).toBe("succeeded");
  });

  it("resumes a run that died after provisioning without creating a second project", async () => {
    const project = await fx.newProject();
    let reachedProvisioned!: () => void;
    const provisioned = new Promise<void>((resolve) => (reachedProvisioned = resolve));
    // The first run stops for good right after journaling the provisioned project, like a killed process.
    const crashed = enableCloudBackend(project, openProjectSandbox, {
      onStep: (step) => (step === "provisioned" ? (reachedProvisioned(), new Promise<never>(() => undefined)) : Promise.resolve()),
    });
    void crashed;
    await provisioned;
    expect(await stateOf(project)).toEqual({ kind: "connecting" });

    // Its lease runs out; the next enable takes over from the journal.
    await fx.db.query("update enable_operations set lease_expires_at = now() - interval '1 second' where project_id = $1 and status = 'running'", [
      project.id,
    ]);
    const response = await enable(project.id);
    expect(response.status).toBe(200);
    expect(await stateOf(project)).toMatchObject({ kind: "connected" });
    expect(await fx.emulatedProjects(project)).toBe(1);
  });
});
