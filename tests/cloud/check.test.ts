import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as checkRoute } from "@/app/api/projects/[id]/check/route";
import type { ApiCheck } from "@/lib/api-contract/types";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { reloadConfig } from "@/lib/config";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import { createTestUser } from "../helpers/users";
import { startCloudFixture, type CloudFixture } from "./fixture";

// The real `npx convex dev` pushes to the emulated deployment; the app dev server stays the
// stand-in (tests/setup.ts): the check reads only the backend.
let fx: CloudFixture;
let project: Project;
let sandbox: Sandbox;

const BROKEN = `import { query } from "./_generated/server";

export const answer = query({ args: {}, handler: async () => {
  const count: number = "forty-two";
  return count;
} });
`;
const FIXED = BROKEN.replace(`"forty-two"`, "42");

const check = (projectId: string, headers = fx.owner.headers) =>
  checkRoute(new Request(`http://localhost/api/projects/${projectId}/check`, { method: "POST", headers }), { params: Promise.resolve({ id: projectId }) });

beforeAll(async () => {
  delete process.env.BACKEND_DEV_COMMAND;
  fx = await startCloudFixture();
  project = await fx.newProject();
  await enableCloudBackend(project, openProjectSandbox);
  sandbox = await fx.sandboxOf(project);
});
afterAll(async () => {
  await fx.close();
});

describe("POST /api/projects/<id>/check on the real backend dev server", () => {
  it("answers a type error just written with pushed false, then its fix with pushed true and no errors", { timeout: 420_000 }, async () => {
    await sandbox.files.write(`${APP_DIR}/convex/answer.ts`, BROKEN);
    const broken = await check(project.id);
    expect(broken.status).toBe(200);
    const failed = (await broken.json()) as ApiCheck;
    expect(failed.pushed).toBe(false);
    // The CLI's closing `✖ TypeScript typecheck via \`tsc\` failed.` may come as an error of its own.
    expect(failed.errors).toContainEqual(expect.objectContaining({ kind: "typecheck", file: "convex/answer.ts", line: 4 }));
    for (const error of failed.errors) expect(error).toMatchObject({ source: "backend-dev", kind: "typecheck", resolvedAt: null });

    await sandbox.files.write(`${APP_DIR}/convex/answer.ts`, FIXED);
    const fixed = (await (await check(project.id)).json()) as ApiCheck;
    expect(fixed).toEqual({ pushed: true, errors: [], durationMs: expect.any(Number) });
  });

  it("refuses a project without a backend (409) and another user's project (404)", async () => {
    const bare = await fx.newProject();
    const refused = await check(bare.id);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.code).toBe("backend_not_connected");

    const stranger = await createTestUser(fx.db, "Stranger");
    const hidden = await check(project.id, stranger.headers);
    expect(hidden.status).toBe(404);
  });

  it("answers 504 check_timeout when no push of the current files finished within CHECK_TIMEOUT_MS", async () => {
    process.env.CHECK_TIMEOUT_MS = "1";
    reloadConfig();
    try {
      const late = await check(project.id);
      expect(late.status).toBe(504);
      expect((await late.json()).error).toEqual({ code: "check_timeout", message: expect.stringContaining("1 ms") });
    } finally {
      delete process.env.CHECK_TIMEOUT_MS;
      reloadConfig();
    }
  });
});
