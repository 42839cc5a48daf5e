import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST } from "@/app/api/projects/[id]/bundles/route";
import { GET as jobRoute } from "@/app/api/projects/[id]/jobs/[jobId]/route";
import { parseBuildArgs, runBuildCommand } from "@/lib/bundles/build-cli";
import { exportCommandFor } from "@/lib/bundles/export";
import { reloadConfig } from "@/lib/config";
import { APP_DIR, APP_TEMPLATE, getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { getProject, insertProject, type Project, updateProjectSandbox } from "@/lib/store/projects";
import { getStreamServing } from "@/lib/store/updates";
import { awaitQueuedJob } from "../helpers/jobs";
import { createTestUser } from "../helpers/users";
import { fetchBlobUrl, sha256Base64Url } from "./build-fixture";
import { openProjectSandbox } from "@/lib/workspace";

const BASE = "http://localhost:3000";
const HERMES_MAGIC = [0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f];
let owner: Awaited<ReturnType<typeof createTestUser>>;
let stranger: Awaited<ReturnType<typeof createTestUser>>;
let project: Project;
let sandbox: Sandbox;

const postBundle = (projectId: string, init: RequestInit = {}) =>
  POST(new Request(`${BASE}/api/projects/${projectId}/bundles`, { method: "POST", ...init, headers: { "content-type": "application/json", ...init.headers } }), {
    params: Promise.resolve({ id: projectId }),
  });

// iOS alone: the suite's one real export of both platforms is tests/bundles/build.test.ts's.
const IOS_ONLY = { platforms: ["ios" as const] };

/** Queues an iOS build as the owner and waits for its job to finish. */
const buildBundle = async (projectId: string, body: Record<string, unknown> = {}) =>
  awaitQueuedJob(await postBundle(projectId, { headers: owner.headers, body: JSON.stringify({ ...IOS_ONLY, ...body }) }), owner.headers);

const headOf = async () => (await sandbox.commands.run("git rev-parse HEAD", { cwd: APP_DIR })).stdout.trim();

async function readManifest(url: string) {
  return JSON.parse(new TextDecoder().decode((await fetchBlobUrl(url)).bytes));
}

// The first build runs the real `expo export` and keeps its output; the tests about what happens
// around an export copy that output instead of exporting again.
const savedDist = path.join(os.tmpdir(), `saved-dist-${crypto.randomBytes(6).toString("hex")}`);
const useExportCommand = (command: string | undefined) => {
  if (command === undefined) delete process.env.BUNDLE_EXPORT_COMMAND;
  else process.env.BUNDLE_EXPORT_COMMAND = command;
  reloadConfig();
};

beforeAll(async () => {
  const db = await getStore();
  owner = await createTestUser(db, "Owner");
  stranger = await createTestUser(db, "Stranger");
  sandbox = await getSandboxProvider().create({ template: APP_TEMPLATE });
  const inserted = await insertProject(db, { ownerId: owner.user.id, name: "Bundled app" });
  await updateProjectSandbox(db, inserted.id, { sandboxId: sandbox.sandboxId, previewUrl: null });
  project = { ...inserted, sandboxId: sandbox.sandboxId };
});

afterAll(async () => {
  useExportCommand(undefined);
  await getSandboxProvider().kill(sandbox.sandboxId);
  await fs.rm(savedDist, { recursive: true, force: true });
});

describe("POST /api/projects/<id>/bundles, then its job", () => {
  it("builds the sandbox app's HEAD for the platforms asked for when no commit is named", async () => {
    useExportCommand(`${exportCommandFor(IOS_ONLY.platforms)} && cp -r dist ${savedDist}`);
    const job = await buildBundle(project.id);
    useExportCommand(`cp -r ${savedDist} dist`);
    expect(job).toMatchObject({ kind: "bundle-build", state: "succeeded", attempts: 1, error: null });
    const body = job.result as { manifestUrl: string };
    const head = await headOf();
    const urls = (platform: string) => ({
      manifestUrl: `${BASE}/blob/bundles/${project.id}/${head}/${platform}/manifest.json`,
      bundleUrl: `${BASE}/blob/bundles/${project.id}/${head}/${platform}/index.js`,
    });
    // Only the platform asked for (the default is both); spec 4.4's URLs are iOS's.
    // A clean working tree: nothing to commit, and HEAD is what the preview shows.
    expect(body).toEqual({ success: true, commitSha: head, ...urls("ios"), platforms: { ios: urls("ios") }, workingTreeCommitted: false, workingTreeDiffers: false });
    for (const platform of ["ios"]) {
      const manifest = await readManifest(urls(platform).manifestUrl);
      expect(manifest.metadata).toEqual({ platform, commitSha: head, commitMessage: "Create app from the app template" });
      const bundle = await fetchBlobUrl(urls(platform).bundleUrl);
      expect([...bundle.bytes.subarray(0, 8)], platform).toEqual(HERMES_MAGIC);
      expect(sha256Base64Url(bundle.bytes)).toBe(manifest.launchAsset.hash);
      // Published at build (after its delivery check): the update URL serves this manifest on the main channel.
      const stream = { channel: "main", platform, runtimeVersion: manifest.runtimeVersion };
      expect(await getStreamServing(await getStore(), project.id, stream)).toMatchObject({
        latest: { release: { commitSha: head, rolloutPercent: 100 }, served: { kind: "bundle", bundle: { commitSha: head, updateId: manifest.id, manifest: JSON.stringify(manifest), deliveryError: null } } },
      });
    }
  });

  it("files the bundle under the full id of the commit given, with the message given", async () => {
    const first = await headOf();
    await sandbox.commands.run('echo "# Notes" > NOTES.md && git add NOTES.md && git commit -q -m "Add notes"', { cwd: APP_DIR });
    const job = await buildBundle(project.id, { commitSha: first.slice(0, 12).toUpperCase(), commitMessage: "Release 2" });
    const body = job.result as { bundleUrl: string; manifestUrl: string };
    // The working tree holds NOTES.md, which the named commit lacks.
    expect(body).toMatchObject({ success: true, commitSha: first, workingTreeCommitted: false, workingTreeDiffers: true });
    expect(body.bundleUrl).toBe(`${BASE}/blob/bundles/${project.id}/${first}/ios/index.js`);
    expect((await readManifest(body.manifestUrl)).metadata.commitMessage).toBe("Release 2");
  });

  it("builds uncommitted edits when no commit is named, committing them first under a message that says so", async () => {
    const before = await headOf();
    const marker = `uncommitted-${crypto.randomBytes(6).toString("hex")}`;
    await sandbox.files.write(`${APP_DIR}/app/preview-only.ts`, `export const marker = "${marker}";\n`);
    // The saved export, with the checkout's new file appended to the bundle: the bundle holds it only if the checkout had it.
    useExportCommand(
      `cp -r ${savedDist} dist && cat app/preview-only.ts >> "dist/$(node -p 'require("./dist/metadata.json").fileMetadata.ios.bundle')"`,
    );
    try {
      const job = await buildBundle(project.id);
      expect(job).toMatchObject({ state: "succeeded", result: { success: true, workingTreeCommitted: true, workingTreeDiffers: false } });
      const body = job.result as { commitSha: string; bundleUrl: string };
      const head = await headOf();
      expect(head).not.toBe(before);
      expect(body.commitSha).toBe(head);
      expect((await sandbox.commands.run("git log -1 --format=%s && git status --porcelain", { cwd: APP_DIR })).stdout).toBe(
        "Commit the working tree to build a bundle of what the preview shows\n",
      );
      expect(new TextDecoder().decode((await fetchBlobUrl(body.bundleUrl)).bytes)).toContain(marker);
    } finally {
      useExportCommand(`cp -r ${savedDist} dist`);
    }
  });

  it("fails the job with commit_not_found, without retries, for a commit the app repository does not have", async () => {
    const job = await buildBundle(project.id, { commitSha: "ABCDEF0123456789ABCDEF0123456789ABCDEF01" });
    expect(job).toMatchObject({ state: "failed", attempts: 1, result: null, error: { code: "commit_not_found" } });
    // The job's status is the project owner's only, under the project only.
    const readJob = (projectId: string, jobId: string, headers: Record<string, string>) =>
      jobRoute(new Request(`${BASE}/api/projects/${projectId}/jobs/${jobId}`, { headers }), { params: Promise.resolve({ id: projectId, jobId }) });
    expect((await readJob(project.id, job.id, stranger.headers)).status).toBe(404);
    expect((await readJob(project.id, job.id, {})).status).toBe(401);
    const other = await insertProject(await getStore(), { ownerId: owner.user.id, name: "Other" });
    expect((await readJob(other.id, job.id, owner.headers)).status).toBe(404);
    expect(await (await readJob(project.id, "not-a-job", owner.headers)).json()).toMatchObject({ error: { code: "job_not_found" } });
  });

  it("is for the owner only, and validates the body", async () => {
    expect((await postBundle(project.id)).status).toBe(401);
    expect((await postBundle(project.id, { headers: stranger.headers })).status).toBe(404);
    expect((await postBundle(crypto.randomUUID(), { headers: owner.headers })).status).toBe(404);
    for (const body of ["not json", JSON.stringify({ commitSha: "../x" }), JSON.stringify({ commitMessage: 5 })]) {
      const response = await postBundle(project.id, { headers: owner.headers, body });
      expect(response.status).toBe(400);
    }
  });

  it("creates the sandbox of a project that has none yet, then builds it", async () => {
    const db = await getStore();
    const bare = await insertProject(db, { ownerId: owner.user.id, name: "No sandbox yet" });
    expect(await buildBundle(bare.id)).toMatchObject({ state: "succeeded", result: { success: true } });
    const stored = await getProject(db, bare.id);
    expect(stored?.sandboxId).toEqual(expect.any(String));
    await getSandboxProvider().kill(stored!.sandboxId!);
  });

  it("fails the job at once with bundle_export_failed and the command's message when the export fails", async () => {
    useExportCommand('echo "SyntaxError: app/index.tsx: Unexpected token (3:4)" >&2; exit 1');
    try {
      // An empty body: every default.
      const job = await awaitQueuedJob(await postBundle(project.id, { headers: owner.headers }), owner.headers);
      expect(job).toMatchObject({
        state: "failed",
        attempts: 1,
        result: null,
        error: { code: "bundle_export_failed", message: expect.stringContaining("SyntaxError: app/index.tsx: Unexpected token (3:4)") },
      });
    } finally {
      useExportCommand(`cp -r ${savedDist} dist`);
    }
  });
});

describe("npm run bundle", () => {
  it("parses its arguments", () => {
    expect(parseBuildArgs(["--project", "p", "--commit", "abcdef1", "--message", "m"])).toEqual({ projectId: "p", commitSha: "abcdef1", commitMessage: "m" });
    expect(() => parseBuildArgs([])).toThrow("--project <id> is required");
    expect(() => parseBuildArgs(["--project", "p", "--force"])).toThrow();
    expect(parseBuildArgs(["--project", "p", "--platform", "android", "--platform", "ios"])).toMatchObject({ platforms: ["android", "ios"] });
    expect(() => parseBuildArgs(["--project", "p", "--platform", "web"])).toThrow('--platform "web" is not ios or android');
  });

  it("builds a stored project and prints the result as JSON", async () => {
    const output = new PassThrough();
    const result = await runBuildCommand({ projectId: project.id, ...IOS_ONLY }, { db: await getStore(), openSandbox: openProjectSandbox, output });
    const printed = JSON.parse(String(output.read()));
    expect(result.success).toBe(true);
    expect(printed).toEqual(result);
    await expect(runBuildCommand({ projectId: crypto.randomUUID() }, { db: await getStore(), openSandbox: openProjectSandbox, output })).rejects.toMatchObject({ code: "project_not_found" });
  });
});
