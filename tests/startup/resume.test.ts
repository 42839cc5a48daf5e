import { describe, expect, it, vi } from "vitest";
import type { Project } from "@/lib/store/projects";

// The sandbox start hook and the provider are replaced: this file checks which projects are
// resumed and how many at once (tests/startup/restart.test.ts resumes real ones after a crash).
const started: string[] = [];
let inFlight = 0;
let mostInFlight = 0;
vi.mock("@/lib/workspace", () => ({
  afterSandboxStart: vi.fn(async (_sandbox: unknown, project: Project) => {
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    started.push(project.id);
    // Yield a few turns so the other workers get to start theirs while this one runs.
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
    inFlight -= 1;
    if (project.name === "broken") throw new Error("sandbox gone");
    return { previewUrl: project.previewUrl, backendDevServer: false };
  }),
}));
vi.mock("@/lib/sandbox", async (original) => ({
  ...(await original<typeof import("@/lib/sandbox")>()),
  getSandboxProvider: () => ({ connect: async (sandboxId: string) => ({ sandboxId }) }),
}));

const { resumeDevServers, RESUME_CONCURRENCY } = await import("@/lib/startup/resume");
const { getStore } = await import("@/lib/store");
const { insertProject, updateProjectSandbox } = await import("@/lib/store/projects");
const { createTestUser } = await import("../helpers/users");

describe("resuming dev servers at start", () => {
  it("resumes every project that served a preview, two at a time, past a failing one", async () => {
    const db = await getStore();
    const owner = await createTestUser(db);
    const withPreview: string[] = [];
    for (const name of ["a", "broken", "c", "d", "e"]) {
      const project = await insertProject(db, { ownerId: owner.user.id, name });
      await updateProjectSandbox(db, project.id, { sandboxId: `sandbox-${name}`, previewUrl: `http://localhost:4100${withPreview.length}` });
      withPreview.push(project.id);
    }
    const noSandbox = await insertProject(db, { ownerId: owner.user.id, name: "never started" });

    const outcomes = await resumeDevServers(db);
    expect(RESUME_CONCURRENCY).toBe(2);
    expect(mostInFlight).toBe(RESUME_CONCURRENCY);
    expect([...started].sort()).toEqual([...withPreview].sort());
    expect(started).not.toContain(noSandbox.id);
    expect(outcomes.filter((outcome) => !outcome.ok)).toEqual([{ projectId: withPreview[1], ok: false }]);
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(4);
  });
});
