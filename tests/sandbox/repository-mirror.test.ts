import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as restartRoute } from "@/app/api/projects/[id]/sandbox/restart/route";
import { GET as repositoryRoute } from "@/app/api/projects/[id]/repository/route";
import type { ApiRepository } from "@/lib/api-contract/types";
import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { createProject } from "@/lib/projects";
import { autosaveRepositories, mirrorBlobPrefix, mirrorProjectRepository } from "@/lib/repository-mirror";
import { APP_DIR, getSandboxProvider, SANDBOX_HOME, type Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { getProject, type Project } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import { createTestUser } from "../helpers/users";

// Real local sandboxes with real git, the fs blob store and the embedded store: the app
// repository is mirrored off the sandbox and a sandbox lost behind the service's back is rebuilt.
let owner: Awaited<ReturnType<typeof createTestUser>>;
let project: Project;
const sandboxIds = new Set<string>();

const git = async (sandbox: Sandbox, command: string) => (await sandbox.commands.run(command, { cwd: APP_DIR })).stdout;
const MARKER = "uncommitted-marker-6f1c";
const UNCOMMITTED = `export default function Draft() { return "${MARKER}"; }\n`;

async function repositoryStatus(projectId: string): Promise<ApiRepository> {
  const response = await repositoryRoute(new Request(`http://localhost/api/projects/${projectId}/repository`, { headers: owner.headers }), {
    params: Promise.resolve({ id: projectId }),
  });
  expect(response.status).toBe(200);
  return response.json();
}

const mirrorBlobs = async (projectId: string) => listAllBlobs(getBlobStore(), mirrorBlobPrefix(projectId));

beforeAll(async () => {
  owner = await createTestUser(await getStore(), "Mirror owner");
  project = await createProject(await getStore(), owner.user.id, "mirrored");
  sandboxIds.add(project.sandboxId!);
}, 300_000);
afterAll(async () => {
  for (const sandboxId of sandboxIds) await getSandboxProvider().kill(sandboxId);
});

describe("the app repository outside its sandbox", () => {
  let before: { head: string; status: string; staged: string; log: string };

  it("is mirrored with every commit and the working tree, leaving the branch, index and files as they were", async () => {
    const sandbox = await getSandboxProvider().connect(project.sandboxId!);
    await sandbox.files.write([
      { path: `${APP_DIR}/notes/one.md`, data: "one\n" },
      { path: `${APP_DIR}/notes/gone.md`, data: "deleted later\n" },
    ]);
    await git(sandbox, "git add -A && git commit -q -m 'Add notes' && echo two >> notes/one.md && git commit -q -am 'Edit notes'");
    // Uncommitted: a new screen, an edit, a deletion, and a staged file.
    await sandbox.files.write([
      { path: `${APP_DIR}/app/draft.tsx`, data: UNCOMMITTED },
      { path: `${APP_DIR}/notes/one.md`, data: "one\ntwo\nthree (uncommitted)\n" },
      { path: `${APP_DIR}/notes/staged.md`, data: "staged\n" },
    ]);
    await git(sandbox, "git rm -q notes/gone.md && git add notes/staged.md");
    before = {
      head: await git(sandbox, "git rev-parse HEAD"),
      status: await git(sandbox, "git status --porcelain"),
      staged: await git(sandbox, "git diff --cached --name-status"),
      log: await git(sandbox, "git log --format=%H%x20%s"),
    };

    expect(await mirrorProjectRepository(sandbox, project.id)).toMatchObject({ status: "mirrored", headCommit: before.head.trim() });
    expect(await git(sandbox, "git rev-parse HEAD")).toBe(before.head);
    expect(await git(sandbox, "git status --porcelain")).toBe(before.status);
    expect(await git(sandbox, "git diff --cached --name-status")).toBe(before.staged);
    expect(await git(sandbox, "git log --format=%H%x20%s")).toBe(before.log);

    // One blob, sealed: neither git's bundle header nor the app's text is readable in the store.
    const [blob, ...more] = await mirrorBlobs(project.id);
    expect(more).toEqual([]);
    const stored = Buffer.from(await new Response((await getBlobStore().get(blob.pathname))!.stream).arrayBuffer());
    expect(stored.includes("git bundle")).toBe(false);
    expect(stored.includes(MARKER)).toBe(false);

    // Nothing changed since: nothing is stored again.
    expect(await mirrorProjectRepository(sandbox, project.id)).toEqual({ status: "unchanged" });
    const status = await repositoryStatus(project.id);
    expect(status).toMatchObject({ mirror: { headCommit: before.head.trim(), branch: "main", workingTreeSaved: true }, lastFailure: null, lastRestore: null });
  });

  it("rebuilds a sandbox removed behind the service's back with every commit and the uncommitted work", async () => {
    const lost = project.sandboxId!;
    await fs.rm(path.join(process.env.DATA_DIR!, "sandboxes", lost), { recursive: true, force: true });
    sandboxIds.delete(lost);

    const sandbox = await openProjectSandbox((await getProject(await getStore(), project.id))!);
    sandboxIds.add(sandbox.sandboxId);
    expect(sandbox.sandboxId).not.toBe(lost);
    expect(await git(sandbox, "git rev-parse HEAD")).toBe(before.head);
    expect(await git(sandbox, "git log --format=%H%x20%s")).toBe(before.log);
    expect(await git(sandbox, "git symbolic-ref --short HEAD")).toBe("main\n");
    expect(await sandbox.files.read(`${APP_DIR}/app/draft.tsx`)).toBe(UNCOMMITTED);
    expect(await sandbox.files.read(`${APP_DIR}/notes/one.md`)).toBe("one\ntwo\nthree (uncommitted)\n");
    expect(await sandbox.files.read(`${APP_DIR}/notes/staged.md`)).toBe("staged\n");
    expect(await sandbox.files.exists(`${APP_DIR}/notes/gone.md`)).toBe(false);
    // Still uncommitted (a restore stages nothing): what was staged before is now a plain change.
    const status = await git(sandbox, "git status --porcelain");
    expect(status).toContain("?? app/draft.tsx");
    expect(status).toContain(" M notes/one.md");
    expect(status).toContain(" D notes/gone.md");
    expect(await git(sandbox, "git diff --cached --name-only")).toBe("");

    const reported = await repositoryStatus(project.id);
    expect(reported.lastRestore).toMatchObject({ headCommit: before.head.trim(), workingTreeRestored: true, mirroredAt: reported.mirror!.mirroredAt });

    // The restored tree is exactly the mirrored one: the autosave finds nothing to store.
    const mirroredAt = reported.mirror!.mirroredAt;
    expect((await autosaveRepositories(getSandboxProvider())).failed).toBe(0);
    expect((await repositoryStatus(project.id)).mirror!.mirroredAt).toBe(mirroredAt);
  });

  it("autosaves a changed repository and replaces the older mirror", async () => {
    const sandbox = await openProjectSandbox((await getProject(await getStore(), project.id))!);
    const previous = (await mirrorBlobs(project.id)).map((blob) => blob.pathname);
    await sandbox.files.write(`${APP_DIR}/app/later.tsx`, "export const later = 1;\n");
    const summary = await autosaveRepositories(getSandboxProvider());
    expect(summary.mirrored).toBeGreaterThanOrEqual(1);
    const now = (await mirrorBlobs(project.id)).map((blob) => blob.pathname);
    expect(now).toHaveLength(1);
    expect(now).not.toEqual(previous);
  });

  it("records a mirror that keeps failing and still restarts the sandbox", async () => {
    const sandbox = await openProjectSandbox((await getProject(await getStore(), project.id))!);
    // A file where the mirror's work directory must go: every attempt fails inside the sandbox.
    await sandbox.files.remove(`${SANDBOX_HOME}/.repository-mirror`);
    await sandbox.files.write(`${SANDBOX_HOME}/.repository-mirror`, "in the way");
    // New work since the last mirror, so the restart's mirror must store something.
    await sandbox.files.write(`${APP_DIR}/app/unsaved.tsx`, "export const unsaved = 1;\n");
    try {
      const response = await restartRoute(
        new Request(`http://localhost/api/projects/${project.id}/sandbox/restart`, { method: "POST", headers: owner.headers }),
        { params: Promise.resolve({ id: project.id }) },
      );
      expect(response.status).toBe(200);
      expect((await response.json()).success).toBe(true);
      const status = await repositoryStatus(project.id);
      expect(status.lastFailure?.message).toEqual(expect.any(String));
      // The newest good mirror is still there, and the work too.
      expect(status.mirror).not.toBeNull();
      expect(await sandbox.files.read(`${APP_DIR}/app/unsaved.tsx`)).toBe("export const unsaved = 1;\n");
    } finally {
      await sandbox.files.remove(`${SANDBOX_HOME}/.repository-mirror`);
    }
    // The next success clears the failure.
    expect((await mirrorProjectRepository(sandbox, project.id)).status).toBe("mirrored");
    expect((await repositoryStatus(project.id)).lastFailure).toBeNull();
  });
});
