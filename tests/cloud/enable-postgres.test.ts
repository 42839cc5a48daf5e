import { afterAll, beforeAll, expect, it } from "vitest";
import { reloadConfig } from "@/lib/config";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { closeStore } from "@/lib/store";
import { getProject } from "@/lib/store/projects";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { startCloudFixture, type CloudFixture } from "./fixture";
import { openProjectSandbox } from "@/lib/workspace";

// Exactly-once must hold where requests really race: several PostgreSQL connections.
let fx: CloudFixture;
let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;

beforeAll(async () => {
  database = await createThrowawayDatabase();
  process.env.DATABASE_URL = database.url;
  reloadConfig();
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
  await closeStore();
  await database.drop();
});

describeWithPostgres("enable on PostgreSQL", () => {
  it("uses PostgreSQL", () => {
    expect(fx.db.kind).toBe("postgres");
  });

  it("provisions once for 20 concurrent enables racing on separate connections", async () => {
    const project = await fx.newProject();
    const states = await Promise.all(Array.from({ length: 20 }, () => enableCloudBackend(project, openProjectSandbox, { pollMs: 20 })));
    expect(new Set(states.map((state) => state.deploymentUrl)).size).toBe(1);
    expect(await fx.emulatedProjects(project)).toBe(1);
    expect((await getProject(fx.db, project.id))?.backendProject).toMatchObject({ kind: "connected" });
  });

  it("lets exactly one of several waiters take over an expired run", async () => {
    const project = await fx.newProject();
    let reached!: () => void;
    const provisioned = new Promise<void>((resolve) => (reached = resolve));
    void enableCloudBackend(project, openProjectSandbox, {
      onStep: (step) => (step === "provisioned" ? (reached(), new Promise<never>(() => undefined)) : Promise.resolve()),
    });
    await provisioned;
    await fx.db.query("update enable_operations set lease_expires_at = now() - interval '1 second' where project_id = $1", [project.id]);
    const states = await Promise.all(Array.from({ length: 5 }, () => enableCloudBackend(project, openProjectSandbox, { pollMs: 20 })));
    expect(new Set(states.map((state) => state.deploymentUrl)).size).toBe(1);
    expect(await fx.emulatedProjects(project)).toBe(1);
    const { rows } = await fx.db.query<{ status: string }>("select status from enable_operations where project_id = $1", [project.id]);
    expect(rows.map((row) => row.status)).toEqual(["succeeded"]);
  });
});
