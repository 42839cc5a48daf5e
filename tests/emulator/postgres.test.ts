import { afterAll, beforeAll, expect, it } from "vitest";
import { createEmulator, createEmulatorTeam } from "@/lib/emulator";
import { applyDocumentWrites, findPush, finishPush, insertPush, listDeploymentsWithPendingJobs, listDocuments } from "@/lib/emulator/store";
import { openStore, type Sql } from "@/lib/store";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";

/** The quota holds under concurrent creation on a real PostgreSQL with several connections. */
describeWithPostgres("emulator on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let db: Sql;

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    db = await openStore({ databaseUrl: database.url, dataDir: process.env.DATA_DIR! });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it("never exceeds a team's quota when creations race", async () => {
    const emulator = createEmulator({ db });
    const { team, token } = await createEmulatorTeam(db, { slug: "racing-team", projectQuota: 3 });
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        emulator.handle(
          new Request(`http://127.0.0.1/emulator/v1/teams/${team.id}/create_project`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ projectName: `race ${index}`, deploymentType: "dev" }),
          }),
        ),
      ),
    );
    const bodies = await Promise.all(responses.map((response) => response.json()));
    const created = bodies.filter((body) => body.projectId !== undefined);
    expect(created).toHaveLength(3);
    // Each created project's dev deployment got its own listener port.
    expect(new Set(created.map((body) => body.deploymentUrl)).size).toBe(3);
    expect(bodies.filter((body) => body.code === "ProjectQuotaReached")).toHaveLength(5);
    const { rows } = await db.query<{ count: number }>(
      "select count(*)::int as count from emulator_projects p join emulator_teams t on t.id = p.team_id where t.slug = 'racing-team'",
    );
    expect(rows[0].count).toBe(3);
    await emulator.close();
  });

  it("stores pushes and documents: the live push, document writes in order, deployments with pending scheduled jobs", async () => {
    const emulator = createEmulator({ db });
    const { team, token } = await createEmulatorTeam(db, { slug: "pushing-team" });
    const created = await (
      await emulator.handle(
        new Request(`http://127.0.0.1/emulator/v1/teams/${team.id}/create_project`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ projectName: "pushing", deploymentType: "dev" }),
        }),
      )
    ).json();
    const name: string = created.deploymentName;
    const push = { id: "push-1", deploymentName: name, config: { functions: "convex/" }, analysis: { "messages.js": {} }, schema: null, auth: [], schemaError: null };
    await db.transaction((tx) => insertPush(tx, push, [{ path: "messages.js", environment: "isolate", source: "export {}", sha256: "abc" }]));
    expect(await findPush(db, name)).toBeNull();
    expect(await db.transaction((tx) => finishPush(tx, name, "push-1"))).toBe(true);
    expect(await findPush(db, name)).toEqual(push);

    const job = "000000000000000000010001_scheduled_functions";
    await db.transaction((tx) =>
      applyDocumentWrites(tx, name, [
        ["000000000000000000010000messages", { body: "one" }],
        ["000000000000000000010000messages", { body: "two" }],
        [job, { name: "messages:send", state: { kind: "pending" } }],
      ]),
    );
    expect(await listDocuments(db, name)).toEqual([
      ["000000000000000000010000messages", { body: "two" }],
      [job, { name: "messages:send", state: { kind: "pending" } }],
    ]);
    expect(await listDeploymentsWithPendingJobs(db)).toEqual([name]);
    await db.transaction((tx) => applyDocumentWrites(tx, name, [[job, null]]));
    expect(await listDeploymentsWithPendingJobs(db)).toEqual([]);
    await emulator.close();
  });
});
