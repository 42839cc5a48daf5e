import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as restartRoute } from "@/app/api/projects/[id]/sandbox/restart/route";
import { BACKEND_SITE_URL_VARIABLE, BACKEND_URL_VARIABLE } from "@/lib/app-names";
import { getBackendCredentials } from "@/lib/cloud/credentials";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import { getProject, type Project } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import { startCloudFixture, type CloudFixture } from "./fixture";

// A connected project on a real local sandbox (real git) whose AI wrote work it never committed:
// the restart route restarts processes and keeps every file.
let fx: CloudFixture;
let project: Project;
let sandbox: Sandbox;

const UNCOMMITTED = {
  "app/settings.tsx": "export default function Settings() { return null; }\n",
  "convex/schema.ts":
    'import { defineSchema, defineTable } from "convex/server";\nimport { v } from "convex/values";\n' +
    "export default defineSchema({ messages: defineTable({ body: v.string() }) });\n",
  "convex/messages.ts": 'import { query } from "./_generated/server";\nexport const list = query({ handler: (ctx) => ctx.db.query("messages").collect() });\n',
};
const ENV_FILE = `${APP_DIR}/.env.local`;

beforeAll(async () => {
  fx = await startCloudFixture();
  project = await fx.newProject();
  sandbox = await fx.sandboxOf(project);
  await enableCloudBackend(project, openProjectSandbox);
  project = (await getProject(fx.db, project.id))!;
}, 300_000);
afterAll(async () => {
  await fx?.close();
});

describe("a sandbox restart", () => {
  it("keeps an uncommitted screen, schema change and function, a stale git lock aside, and .env.local as the CLI left it", async () => {
    await sandbox.files.write(Object.entries(UNCOMMITTED).map(([name, data]) => ({ path: `${APP_DIR}/${name}`, data })));
    // The CLI writes the HTTP-actions URL beside the deployment URL; the service derives none for a local deployment.
    const envBefore = `${await sandbox.files.read(ENV_FILE)}${BACKEND_SITE_URL_VARIABLE}=http://127.0.0.1:1/site\n`;
    await sandbox.files.write(ENV_FILE, envBefore);
    // A git command killed while it held the index.
    await sandbox.files.write(`${APP_DIR}/.git/index.lock`, "");
    const statusBefore = (await sandbox.commands.run("git status --porcelain", { cwd: APP_DIR })).stdout;
    const headBefore = (await sandbox.commands.run("git rev-parse HEAD", { cwd: APP_DIR })).stdout;

    const response = await restartRoute(
      new Request(`http://localhost/api/projects/${project.id}/sandbox/restart`, { method: "POST", headers: fx.owner.headers }),
      { params: Promise.resolve({ id: project.id }) },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, backendDevServer: "running" });

    for (const [name, data] of Object.entries(UNCOMMITTED)) expect(await sandbox.files.read(`${APP_DIR}/${name}`), name).toBe(data);
    const env = await sandbox.files.read(ENV_FILE);
    // Every line is kept (restoring the URL may move its line to the end).
    const linesOf = (text: string) => text.split("\n").filter(Boolean).sort();
    expect(linesOf(env)).toEqual(linesOf(envBefore));
    expect(env).toContain(`${BACKEND_SITE_URL_VARIABLE}=http://127.0.0.1:1/site\n`);
    expect(env).toContain(`${BACKEND_URL_VARIABLE}=${(await getBackendCredentials(project.id))!.deploymentUrl}`);
    expect(await sandbox.files.exists(`${APP_DIR}/.git/index.lock`)).toBe(false);
    // Still uncommitted, on the same commit: the restart neither reset nor committed anything.
    expect((await sandbox.commands.run("git status --porcelain", { cwd: APP_DIR })).stdout).toBe(statusBefore);
    expect(statusBefore).toContain("app/settings.tsx");
    expect((await sandbox.commands.run("git rev-parse HEAD", { cwd: APP_DIR })).stdout).toBe(headBefore);
  });
});
