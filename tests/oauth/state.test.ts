import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { consumeOAuthState, issueOAuthState, OAUTH_STATE_TTL_MS } from "@/lib/cloud/oauth";
import { reloadConfig } from "@/lib/config";
import { getStore, type Sql } from "@/lib/store";
import { deleteProject, insertProject } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

let db: Sql;
let ownerId: string;
const T0 = new Date("2026-11-23T12:00:00Z");
const at = (ms: number) => () => new Date(T0.getTime() + ms);

async function newState(codeVerifier = "verifier-" + crypto.randomUUID()) {
  const project = await insertProject(db, { ownerId, name: "app" });
  const state = await issueOAuthState(db, { userId: ownerId, projectId: project.id, codeVerifier }, { now: at(0) });
  return { project, state, codeVerifier };
}

beforeAll(async () => {
  db = await getStore();
  ownerId = (await createTestUser(db)).user.id;
});
afterEach(() => {
  delete process.env.SECRETS_KEY;
  reloadConfig();
});

describe("OAuth state", () => {
  it("gives back the project and the PKCE verifier once, and keeps the verifier encrypted at rest", async () => {
    const { project, state, codeVerifier } = await newState();
    const raw = JSON.stringify((await db.query("select * from oauth_states")).rows);
    expect(raw).not.toContain(codeVerifier);
    expect(raw).not.toContain(state.split(".")[0]);
    expect(await consumeOAuthState(db, state, ownerId, { now: at(1000) })).toEqual({ projectId: project.id, codeVerifier });
    await expect(consumeOAuthState(db, state, ownerId, { now: at(2000) })).rejects.toThrow("already used");
  });

  it("expires after ten minutes", async () => {
    const { state } = await newState();
    await expect(consumeOAuthState(db, state, ownerId, { now: at(OAUTH_STATE_TTL_MS) })).rejects.toMatchObject({
      status: 400,
      code: "invalid_oauth_state",
      message: expect.stringContaining("expired"),
    });
    const fresh = await newState();
    await expect(consumeOAuthState(db, fresh.state, ownerId, { now: at(OAUTH_STATE_TTL_MS - 1) })).resolves.toMatchObject({
      projectId: fresh.project.id,
    });
  });

  it("is bound to the user it was issued to", async () => {
    const { state, project } = await newState();
    const other = await createTestUser(db, "Other");
    await expect(consumeOAuthState(db, state, other.user.id, { now: at(0) })).rejects.toThrow("another user");
    expect((await consumeOAuthState(db, state, ownerId, { now: at(0) })).projectId).toBe(project.id);
  });

  it("is signed with a key derived from the secrets key", async () => {
    const { state } = await newState();
    process.env.SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");
    reloadConfig();
    await expect(consumeOAuthState(db, state, ownerId, { now: at(0) })).rejects.toThrow("not one this service issued");
  });

  it("dies with its project, and expired states are purged when new ones are issued", async () => {
    const { state, project } = await newState();
    await deleteProject(db, project.id);
    await expect(consumeOAuthState(db, state, ownerId, { now: at(0) })).rejects.toThrow("already used");

    await newState();
    const later = await insertProject(db, { ownerId, name: "later" });
    await issueOAuthState(db, { userId: ownerId, projectId: later.id, codeVerifier: "v" }, { now: at(OAUTH_STATE_TTL_MS) });
    const { rows } = await db.query<{ project_id: string }>("select project_id from oauth_states");
    expect(rows.map((row) => row.project_id)).toEqual([later.id]);
  });
});
