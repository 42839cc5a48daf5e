import "../helpers/real-dev-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as connectRoute } from "@/app/api/backend/managed/connect/route";
import { POST as disconnectRoute } from "@/app/api/backend/managed/disconnect/route";
import { GET as statusRoute } from "@/app/api/backend/status/route";
import { POST as enableRoute } from "@/app/api/cloud/enable/route";
import { BACKEND_PACKAGE_RANGE } from "@/lib/app-names";
import { BACKEND_DEV_SERVER_ROLE } from "@/lib/cloud/backend-dev-server";
import { missingSandboxWiring } from "@/lib/cloud/sandbox-setup";
import { createProject } from "@/lib/projects";
import { APP_DEV_SERVER_ROLE, getAppPreviewUrl } from "@/lib/dev-servers";
import { APP_DIR, findProcessesByRole, getSandboxProvider } from "@/lib/sandbox";
import { getLatestOperation } from "@/lib/store/operations";
import { getProject } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "./fixture";

let fx: CloudFixture;

const post = (handler: typeof enableRoute, path: string, body: object) =>
  handler(
    new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { ...fx.owner.headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    undefined,
  );

/** The page's entry bundle as Metro serves it. */
async function entryBundle(previewUrl: string): Promise<string> {
  const page = await (await fetch(previewUrl)).text();
  const src = /<script src="(\/node_modules\/expo-router\/entry\.bundle\?[^"]+)"/.exec(page)?.[1];
  if (!src) throw new Error(`no expo-router entry bundle in ${page.slice(0, 200)}`);
  const response = await fetch(new URL(src.replaceAll("&amp;", "&"), previewUrl));
  expect(response.status).toBe(200);
  return response.text();
}

/** What the dashboard reads to offer "Set up the app". */
async function missingWiringReported(projectId: string): Promise<string[]> {
  const response = await statusRoute(new Request(`http://localhost/api/backend/status?projectId=${projectId}`, { headers: fx.owner.headers }), undefined);
  return (await response.json()).missingSandboxWiring;
}

beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

describe("enable on a project connected without the sandbox wiring", () => {
  it("finishes the sandbox steps once and reports them; disconnect then unpoints the app, which runs without a backend", async () => {
    const project = await fx.newProject();
    const connected = await (await post(connectRoute, "/api/backend/managed/connect", { projectId: project.id })).json();
    const sandbox = await fx.sandboxOf(project);
    expect(await missingSandboxWiring(sandbox, connected.deploymentUrl)).toEqual(["backend_files", "layout_wrapper", "backend_package", "backend_url"]);
    expect(await missingWiringReported(project.id)).toEqual(["backend_files", "layout_wrapper", "backend_package", "backend_url"]);
    const operation = await getLatestOperation(fx.db, project.id);

    const response = await post(enableRoute, "/api/cloud/enable", { projectId: project.id });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      success: true,
      deploymentUrl: connected.deploymentUrl,
      completedSandboxSteps: ["backend_files", "layout_wrapper", "backend_package", "backend_url"],
    });
    // No second provisioning: the stored backend is used.
    expect((await getLatestOperation(fx.db, project.id))?.id).toBe(operation?.id);
    expect(await fx.emulatedProjects(project)).toBe(1);

    expect(await sandbox.files.exists(`${APP_DIR}/convex/schema.ts`)).toBe(true);
    expect(await sandbox.files.read(`${APP_DIR}/app/_layout.tsx`)).toMatch(/<BackendWrapper>/);
    expect(JSON.parse(await sandbox.files.read(`${APP_DIR}/package.json`)).dependencies.convex).toBe(BACKEND_PACKAGE_RANGE);
    expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).toContain(`EXPO_PUBLIC_CONVEX_URL=${connected.deploymentUrl}\n`);
    const log = await sandbox.commands.run("git log -1 --format=%s && git show --name-only --format= HEAD", { cwd: APP_DIR });
    const [subject, ...committed] = log.stdout.trim().split("\n");
    expect(subject).toBe("Enable Convex cloud backend");
    expect(committed).toEqual(expect.arrayContaining(["package.json", "convex/schema.ts", "app/_layout.tsx"]));
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toHaveLength(1);
    const previewUrl = await getAppPreviewUrl(sandbox);
    expect(await entryBundle(previewUrl)).toContain(connected.deploymentUrl);

    expect(await missingWiringReported(project.id)).toEqual([]);

    // Idempotent: with the wiring complete, enable answers as for any connected project.
    const again = await post(enableRoute, "/api/cloud/enable", { projectId: project.id });
    expect(await again.json()).toEqual({ success: true, deploymentUrl: connected.deploymentUrl });

    // Disconnect: the URL leaves .env.local, and the restarted app bundles without it and still renders.
    expect((await post(disconnectRoute, "/api/backend/managed/disconnect", { projectId: project.id })).status).toBe(200);
    expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).not.toContain("EXPO_PUBLIC_CONVEX_URL");
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(0);
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toHaveLength(1);
    const bundle = await entryBundle(previewUrl);
    expect(bundle).not.toContain(connected.deploymentUrl);
    expect(bundle).toContain("Welcome to your app");
    expect(bundle).toContain("BackendWrapper");
  });
});

describe("a connected project that gets its sandbox later", () => {
  it("gets the backend URL as a restarted sandbox would, and enable finishes the rest of the wiring", async () => {
    const project = await createProject(fx.db, fx.owner.user.id, "sandbox later", { sandbox: false });
    const connected = await (await post(connectRoute, "/api/backend/managed/connect", { projectId: project.id })).json();
    expect((await getProject(fx.db, project.id))?.sandboxId).toBeNull();

    // Enable creates the sandbox, which first gets what a restart restores (the URL); the app's
    // code is new from the template, so enable then finishes the rest of the wiring.
    const response = await post(enableRoute, "/api/cloud/enable", { projectId: project.id });
    expect(await response.json()).toMatchObject({ success: true, completedSandboxSteps: ["backend_files", "layout_wrapper", "backend_package"] });
    const withSandbox = (await getProject(fx.db, project.id))!;
    const sandbox = await fx.sandboxOf(withSandbox);
    try {
      expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).toContain(`EXPO_PUBLIC_CONVEX_URL=${connected.deploymentUrl}\n`);
      expect(await missingWiringReported(project.id)).toEqual([]);
      expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    } finally {
      await getSandboxProvider().kill(withSandbox.sandboxId!);
    }
  });
});
