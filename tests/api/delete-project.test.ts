import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as connectRoute } from "@/app/api/backend/managed/connect/route";
import { POST as restartRoute } from "@/app/api/projects/[id]/sandbox/restart/route";
import { DELETE as deleteRoute, GET as getRoute } from "@/app/api/projects/[id]/route";
import { getBlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { getJobQueue } from "@/lib/jobs";
import { createProject } from "@/lib/projects";
import { getSandboxProvider } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";
import { getCredentials, upsertCredentials } from "@/lib/store/credentials";
import { getProject, setBackendProject, type Project } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";

let fx: CloudFixture;

const call = (handler: typeof getRoute, projectId: string, init: RequestInit = {}) =>
  handler(new Request(`http://localhost/api/projects/${projectId}`, { ...init, headers: fx.owner.headers }), { params: Promise.resolve({ id: projectId }) });
const deleteProject = (projectId: string) => call(deleteRoute, projectId, { method: "DELETE" });

const sandboxDir = (sandboxId: string) => path.join(getConfig().DATA_DIR, "sandboxes", sandboxId);
const blobPathnames = (project: Project) => [`${project.ownerId}/${project.id}/assets/logo.png`, `bundles/${project.id}/abc1234/ios/index.js`, `screenshots/${project.id}-mobile.png`];

async function putBlobs(project: Project): Promise<void> {
  for (const pathname of blobPathnames(project)) await getBlobStore().put(pathname, "bytes", { access: "public", allowOverwrite: true });
}

async function connectManaged(project: Project): Promise<void> {
  const response = await connectRoute(
    new Request("http://localhost/api/backend/managed/connect", {
      method: "POST",
      headers: { ...fx.owner.headers, "content-type": "application/json" },
      body: JSON.stringify({ projectId: project.id }),
    }),
    undefined,
  );
  expect(response.status).toBe(200);
  expect(await fx.emulatedProjects(project)).toBe(1);
}

/** 200, then nothing of the project is left anywhere, and a second delete answers 404. */
async function expectDeletedEverywhere(project: Project): Promise<void> {
  const deleted = await deleteProject(project.id);
  expect(deleted.status, await deleted.clone().text()).toBe(200);
  expect(await deleted.json()).toEqual({ success: true });
  await expectNothingLeft(project);
  const again = await deleteProject(project.id);
  expect(again.status).toBe(404);
  expect((await again.json()).error.code).toBe("project_not_found");
}

async function expectNothingLeft(project: Project): Promise<void> {
  expect(await getProject(fx.db, project.id)).toBeNull();
  expect(await getCredentials(fx.db, project.id)).toBeNull();
  for (const pathname of blobPathnames(project)) expect(await getBlobStore().head(pathname)).toBeNull();
  if (project.sandboxId) expect(fs.existsSync(sandboxDir(project.sandboxId))).toBe(false);
}

beforeAll(async () => {
  // A delete that failed part-way is finished by a job: retried after a second, not five.
  fx = await startCloudFixture({ JOBS_RETRY_DELAY_SECONDS: "1" });
});
afterAll(async () => {
  await fx.close();
});

describe("DELETE /api/projects/<id> deletes every kind of project, idempotently", () => {
  it("a new project: its sandbox, blobs and row", async () => {
    const project = await fx.newProject();
    await putBlobs(project);
    expect(fs.existsSync(sandboxDir(project.sandboxId!))).toBe(true);
    await expectDeletedEverywhere(project);
  });

  it("a project without a sandbox", async () => {
    const project = await createProject(fx.db, fx.owner.user.id, "no sandbox yet", { sandbox: false });
    expect(project.sandboxId).toBeNull();
    await putBlobs(project);
    await expectDeletedEverywhere(project);
  });

  it("a project with a managed backend: the backend project goes with it", async () => {
    const project = await fx.newProject();
    await connectManaged(project);
    await putBlobs(project);
    await expectDeletedEverywhere(project);
    expect(await fx.emulatedProjects(project)).toBe(0);
  });

  it("an OAuth-connected project: disconnected, its backend project (the user's own) kept", async () => {
    const project = await fx.newProject();
    await upsertCredentials(fx.db, {
      projectId: project.id,
      userId: fx.owner.user.id,
      mode: "oauth",
      teamSlug: "their-team",
      projectSlug: "their-app",
      deploymentUrl: "https://their-app-123.convex.cloud",
      deploymentName: "their-app-123",
      adminKey: "prod:their-app-123|secret",
      accessToken: "oauth-access-token",
      backendProjectId: 7,
    });
    await setBackendProject(fx.db, project.id, { kind: "connected", projectSlug: "their-app", teamSlug: "their-team", deploymentUrl: "https://their-app-123.convex.cloud", deploymentName: "their-app-123" });
    await putBlobs(project);
    await expectDeletedEverywhere(project);
  });

  it("a managed project whose sandbox is gone, with the provider from another bundle's copy of the sandbox module", async () => {
    const project = await fx.newProject();
    await connectManaged(project);
    await putBlobs(project);
    // As after a crash: the sandbox did not survive, and the provider was created at start-up by
    // instrumentation, whose bundle has its own copy of the error classes (`instanceof` fails).
    await getSandboxProvider().kill(project.sandboxId!);
    await resetProcessSingleton("sandboxProvider");
    vi.resetModules();
    const foreign = await import("@/lib/sandbox");
    const provider = foreign.getSandboxProvider();
    await expect(provider.connect(project.sandboxId!)).rejects.toBeInstanceOf(foreign.SandboxNotFoundError);
    expect(getSandboxProvider()).toBe(provider);

    await expectDeletedEverywhere(project);
    expect(await fx.emulatedProjects(project)).toBe(0);
  });

  it("a project whose sandbox is gone can be restarted: it gets a new sandbox", async () => {
    const project = await fx.newProject();
    await getSandboxProvider().kill(project.sandboxId!);
    const restarted = await restartRoute(new Request(`http://localhost/api/projects/${project.id}/sandbox/restart`, { method: "POST", headers: fx.owner.headers }), {
      params: Promise.resolve({ id: project.id }),
    });
    expect(restarted.status, await restarted.clone().text()).toBe(200);
    const stored = (await getProject(fx.db, project.id))!;
    expect(stored.sandboxId).not.toBe(project.sandboxId);
    expect(fs.existsSync(sandboxDir(stored.sandboxId!))).toBe(true);
    expect((await fetch(stored.previewUrl!)).status).toBeLessThan(500);
    await expectDeletedEverywhere(stored);
  });

  it("a delete stopped part-way by a backend fault answers 202 and its job finishes it", async () => {
    const project = await fx.newProject();
    await connectManaged(project);
    await putBlobs(project);
    // Every try of the request's delete fails (3, with its retries), and every try of the job's first run.
    fx.emulator.emulator.faults.add({ api: "management", path: "/delete", status: 500, times: 6 });

    const response = await deleteProject(project.id);
    expect(response.status, await response.clone().text()).toBe(202);
    const job = (await response.json()) as { id: string; kind: string; state: string };
    expect(job).toMatchObject({ kind: "project-delete", projectId: project.id });
    expect(response.headers.get("location")).toBe(`/api/projects/${project.id}/jobs/${job.id}`);
    // Meanwhile the project is still listed and can be deleted again (its sandbox is gone already).
    expect((await call(getRoute, project.id)).status).toBe(200);

    const queue = await getJobQueue();
    let finished = await queue.get(job.id);
    while (finished?.state !== "succeeded" && finished?.state !== "failed") {
      await new Promise((resolve) => setTimeout(resolve, 200));
      finished = await queue.get(job.id);
    }
    expect(finished).toMatchObject({ state: "succeeded", result: { success: true } });
    expect(finished.attempts).toBeGreaterThan(1);
    await expectNothingLeft(project);
    expect(await fx.emulatedProjects(project)).toBe(0);
    expect((await deleteProject(project.id)).status).toBe(404);
  }, 120_000);
});
