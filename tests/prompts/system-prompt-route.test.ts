import { beforeAll, describe, expect, it } from "vitest";
import { GET as systemPromptRoute } from "@/app/api/projects/[id]/system-prompt/route";
import { getSystemPrompt } from "@/lib/prompts";
import { BACKEND_PROMPT } from "@/lib/prompts/backend";
import { getStore } from "@/lib/store";
import { insertProject, setBackendProject } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

const fetchPrompt = (projectId: string, headers: Record<string, string>) =>
  systemPromptRoute(new Request(`http://localhost:3000/api/projects/${projectId}/system-prompt`, { headers }), {
    params: Promise.resolve({ id: projectId }),
  });

describe("GET /api/projects/<id>/system-prompt", () => {
  let owner: Awaited<ReturnType<typeof createTestUser>>;
  let stranger: Awaited<ReturnType<typeof createTestUser>>;
  let projectId: string;

  beforeAll(async () => {
    const db = await getStore();
    owner = await createTestUser(db, "Owner");
    stranger = await createTestUser(db, "Stranger");
    projectId = (await insertProject(db, { ownerId: owner.user.id, name: "Prompted" })).id;
  });

  it("answers the base prompt while the project is not connected, and adds the backend guidelines once it is", async () => {
    const plain = await fetchPrompt(projectId, owner.headers);
    expect(plain.status).toBe(200);
    const before = await plain.json();
    expect(before).toEqual({ systemPrompt: getSystemPrompt(false), backendConnected: false, version: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(before.systemPrompt).not.toContain(BACKEND_PROMPT);

    const db = await getStore();
    await setBackendProject(db, projectId, { kind: "connecting" });
    expect((await (await fetchPrompt(projectId, owner.headers)).json()).backendConnected).toBe(false);

    await setBackendProject(db, projectId, { kind: "connected", projectSlug: "p", teamSlug: "t", deploymentUrl: "http://127.0.0.1:1", deploymentName: "d" });
    const after = await (await fetchPrompt(projectId, owner.headers)).json();
    expect(after).toEqual({ systemPrompt: getSystemPrompt(true), backendConnected: true, version: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(after.systemPrompt).toContain(BACKEND_PROMPT);
    expect(after.version).not.toBe(before.version);
  });

  it("hides someone else's project behind a 404, and needs a signed-in caller", async () => {
    const foreign = await fetchPrompt(projectId, stranger.headers);
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).error.code).toBe("project_not_found");
    expect((await fetchPrompt(projectId, {})).status).toBe(401);
  });
});
