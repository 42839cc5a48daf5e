import crypto from "node:crypto";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST } from "@/app/api/projects/[id]/bundles/route";
import { parseBuildArgs, runBuildCommand } from "@/lib/bundles/build-cli";
import { reloadConfig } from "@/lib/config";
import { APP_DIR, APP_TEMPLATE, getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { getProject, insertProject, type Project, updateProjectSandbox } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";
import { fetchBlobUrl } from "./build-fixture";

const BASE = "http://localhost:3000";
let owner: Awaited<ReturnType<typeof createTestUser>>;
let stranger: Awaited<ReturnType<typeof createTestUser>>;
let project: Project;
let sandbox: Sandbox;

const postBundle = (projectId: string, init: RequestInit = {}) =>
  POST(new Request(`${BASE}/api/projects/${projectId}/bundles`, { method: "POST", ...init }), { params: Promise.resolve({ id: projectId }) });

const headOf = async () => (await sandbox.commands.run("git rev-parse HEAD", { cwd: APP_DIR })).stdout.trim();

async function readManifest(url: string) {
  return JSON.parse(new TextDecoder().decode((await fetchBlobUrl(url)).bytes));
}

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
  delete process.env.BUNDLE_EXPORT_COMMAND;
  reloadConfig();
  await getSandboxProvider().kill(sandbox.sandboxId);
});

describe("POST /api/projects/<id>/bundles", () => {
  it("builds the sandbox app's HEAD when the body is empty", async () => {
    const response = await postBundle(project.id, { headers: owner.headers });
    expect(response.status).toBe(200);
    const body = await response.json();
    const head = await headOf();
    expect(body).toEqual({ success: true, commitSha: head, manifestUrl: `${BASE}/blob/bundles/${project.id}/${head}/ios/manifest.json`, bundleUrl: `${BASE}/blob/bundles/${project.id}/${head}/ios/index.js` });
    expect((await readManifest(body.manifestUrl)).metadata).toEqual({ platform: "ios", commitSha: head, commitMessage: "Create app from the app template" });
  });

  it("files the bundle under the commit and message given", async () => {
    const commitSha = "ABCDEF0123456789ABCDEF0123456789ABCDEF01";
    const response = await postBundle(project.id, { headers: owner.headers, body: JSON.stringify({ commitSha, commitMessage: "Release 2" }) });
    const body = await response.json();
    expect(body.bundleUrl).toBe(`${BASE}/blob/bundles/${project.id}/${commitSha.toLowerCase()}/ios/index.js`);
    expect((await readManifest(body.manifestUrl)).metadata.commitMessage).toBe("Release 2");
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
    const response = await postBundle(bare.id, { headers: owner.headers });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true });
    const stored = await getProject(db, bare.id);
    expect(stored?.sandboxId).toEqual(expect.any(String));
    await getSandboxProvider().kill(stored!.sandboxId!);
  });

  it("answers 502 with success false and the command's message when the export fails", async () => {
    process.env.BUNDLE_EXPORT_COMMAND = 'echo "SyntaxError: app/index.tsx: Unexpected token (3:4)" >&2; exit 1';
    reloadConfig();
    try {
      const response = await postBundle(project.id, { headers: owner.headers });
      expect(response.status).toBe(502);
      expect(await response.json()).toEqual({
        success: false,
        commitSha: await headOf(),
        error: { code: "bundle_export_failed", message: expect.stringContaining("SyntaxError: app/index.tsx: Unexpected token (3:4)") },
      });
    } finally {
      delete process.env.BUNDLE_EXPORT_COMMAND;
      reloadConfig();
    }
  });
});

describe("npm run bundle", () => {
  it("parses its arguments", () => {
    expect(parseBuildArgs(["--project", "p", "--commit", "abcdef1", "--message", "m"])).toEqual({ projectId: "p", commitSha: "abcdef1", commitMessage: "m" });
    expect(() => parseBuildArgs([])).toThrow("--project <id> is required");
    expect(() => parseBuildArgs(["--project", "p", "--force"])).toThrow();
  });

  it("builds a stored project and prints the result as JSON", async () => {
    const output = new PassThrough();
    const result = await runBuildCommand({ projectId: project.id }, { db: await getStore(), output });
    const printed = JSON.parse(String(output.read()));
    expect(result.success).toBe(true);
    expect(printed).toEqual(result);
    await expect(runBuildCommand({ projectId: crypto.randomUUID() }, { db: await getStore(), output })).rejects.toMatchObject({ code: "project_not_found" });
  });
});
