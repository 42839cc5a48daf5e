import { afterAll, beforeAll, expect, it } from "vitest";
import { consumeOAuthState, issueOAuthState } from "@/lib/cloud/oauth";
import { reloadConfig } from "@/lib/config";
import { closeStore, getStore, type Sql } from "@/lib/store";
import { insertProject } from "@/lib/store/projects";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { createTestUser } from "../helpers/users";

// Single use must hold where callbacks really race: several PostgreSQL connections.
let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
let db: Sql;

beforeAll(async () => {
  database = await createThrowawayDatabase();
  process.env.DATABASE_URL = database.url;
  reloadConfig();
  db = await getStore();
});
afterAll(async () => {
  await closeStore();
  await database.drop();
});

describeWithPostgres("OAuth state on PostgreSQL", () => {
  it("lets exactly one of 10 concurrent callbacks use a state", async () => {
    expect(db.kind).toBe("postgres");
    const { user } = await createTestUser(db);
    const project = await insertProject(db, { ownerId: user.id, name: "app" });
    const state = await issueOAuthState(db, { userId: user.id, projectId: project.id, codeVerifier: "verifier" });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => consumeOAuthState(db, state, user.id)));
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toEqual([
      { status: "fulfilled", value: { projectId: project.id, codeVerifier: "verifier" } },
    ]);
    for (const outcome of outcomes.filter((outcome) => outcome.status === "rejected")) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "invalid_oauth_state", message: expect.stringContaining("already used") });
    }
  });
});
