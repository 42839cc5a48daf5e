import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiToken } from "@/lib/auth";
import { createSecretBox } from "@/lib/secrets";
import { migrate } from "@/lib/store/migrate";
import type { Sql } from "@/lib/store";
import { deleteCredentials, getCredentials, upsertCredentials } from "@/lib/store/credentials";
import { getOwnedProject, getProject, insertProject, listProjects, setBackendProject } from "@/lib/store/projects";
import {
  finishOperation,
  getLatestOperation,
  getRunningOperation,
  insertRunningOperation,
  recordSteps,
  takeOverAbandonedOperation,
  type LeaseHolder,
} from "@/lib/store/operations";
import { registerInstance, renewInstance, type InstanceIdentity } from "@/lib/store/instances";
import { findUserByTokenHash, getUser } from "@/lib/store/users";
import { createTestUser } from "../helpers/users";

/** A registered, live instance boot (alive for a minute). */
async function liveInstance(sql: Sql, instanceId = `i-${crypto.randomUUID()}`): Promise<InstanceIdentity> {
  const identity = { instanceId, bootId: crypto.randomUUID() };
  await registerInstance(sql, identity, 60_000);
  return identity;
}

/** The store contract: every SQL backend (PGlite, PostgreSQL) must pass it. */
export function describeStoreSuite(
  name: string,
  open: () => Promise<{ sql: Sql; cleanup: () => Promise<void> }>,
  describeSuite: (title: string, body: () => void) => void = describe,
) {
  describeSuite(`store: ${name}`, () => {
    let sql: Sql;
    let cleanup: () => Promise<void>;
    const box = createSecretBox(crypto.randomBytes(32));

    beforeAll(async () => {
      ({ sql, cleanup } = await open());
    });
    afterAll(async () => {
      await cleanup();
    });

    it("applies migrations once: a second run applies nothing and keeps the data", async () => {
      const { user } = await createTestUser(sql);
      expect(await migrate(sql)).toEqual([]);
      expect(await migrate(sql)).toEqual([]);
      expect(await getUser(sql, user.id)).toMatchObject({ id: user.id });
      const { rows } = await sql.query<{ count: number }>("select count(*)::int as count from app_migrations");
      expect(rows[0].count).toBeGreaterThan(0);
    });

    it("survives concurrent migrators", async () => {
      const results = await Promise.all([migrate(sql), migrate(sql), migrate(sql)]);
      expect(results.flat()).toEqual([]);
    });

    it("stores API tokens only as SHA-256 digests", async () => {
      const { user, token } = await createTestUser(sql);
      const { rows } = await sql.query<Record<string, unknown>>("select * from api_tokens where user_id = $1", [user.id]);
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(token);
      expect(rows[0].token_hash).toBe(hashApiToken(token));
      expect(await findUserByTokenHash(sql, hashApiToken(token))).toMatchObject({ id: user.id });
      expect(await findUserByTokenHash(sql, hashApiToken(token + "x"))).toBeNull();
    });

    it("records a token's use at most once a minute, so most requests only read it", async () => {
      const { user, token } = await createTestUser(sql);
      const tokenHash = hashApiToken(token);
      const lastUsed = async () => {
        const { rows } = await sql.query<{ last_used_at: Date | null }>("select last_used_at from api_tokens where token_hash = $1", [tokenHash]);
        return rows[0].last_used_at;
      };
      const moveLastUseBack = (seconds: number) =>
        sql.query("update api_tokens set last_used_at = last_used_at - make_interval(secs => $2) where token_hash = $1", [tokenHash, seconds]);
      expect(await lastUsed()).toBeNull();
      expect(await findUserByTokenHash(sql, tokenHash)).toMatchObject({ id: user.id });
      expect(await lastUsed()).not.toBeNull();
      // Recorded 30 s ago: a use leaves the record alone.
      await moveLastUseBack(30);
      const recorded = (await lastUsed())!;
      expect(await findUserByTokenHash(sql, tokenHash)).toMatchObject({ id: user.id });
      expect(await lastUsed()).toEqual(recorded);
      // Recorded 61 s ago: the use is recorded again, at the database's now.
      await moveLastUseBack(31);
      expect(await findUserByTokenHash(sql, tokenHash)).toMatchObject({ id: user.id });
      expect((await lastUsed())!.getTime()).toBeGreaterThanOrEqual(recorded.getTime() + 30_000);
    });

    it("finds a project only for its owner", async () => {
      const a = await createTestUser(sql, "A");
      const b = await createTestUser(sql, "B");
      const project = await insertProject(sql, { ownerId: a.user.id, name: "A's app" });
      expect(await getOwnedProject(sql, project.id, a.user.id)).toMatchObject({ id: project.id, name: "A's app" });
      expect(await getOwnedProject(sql, project.id, b.user.id)).toBeNull();
      expect((await listProjects(sql, b.user.id)).map((p) => p.id)).not.toContain(project.id);
      expect(await getProject(sql, "not-a-uuid")).toBeNull();
    });

    it("round-trips every backendProject variant and refuses unknown kinds", async () => {
      const { user } = await createTestUser(sql);
      const project = await insertProject(sql, { ownerId: user.id, name: "states" });
      expect(project.backendProject).toBeNull();
      const variants = [
        { kind: "connecting" as const },
        {
          kind: "connected" as const,
          projectSlug: "p",
          teamSlug: "t",
          deploymentUrl: "https://x.example",
          deploymentName: "x",
          warningMessage: "dev server did not start",
        },
        { kind: "failed" as const, errorMessage: "quota" },
      ];
      for (const state of variants) {
        await setBackendProject(sql, project.id, state);
        expect((await getProject(sql, project.id))?.backendProject).toEqual(state);
      }
      await setBackendProject(sql, project.id, null);
      expect((await getProject(sql, project.id))?.backendProject).toBeNull();
      await expect(
        sql.query("update projects set backend_project = $2 where id = $1", [project.id, JSON.stringify({ kind: "bogus" })]),
      ).rejects.toThrow();
    });

    it("encrypts credentials at rest and decrypts them for the server", async () => {
      const { user } = await createTestUser(sql);
      const project = await insertProject(sql, { ownerId: user.id, name: "creds" });
      const adminKey = "project:team-a:app-b|secret-deploy-key-123";
      const input = {
        projectId: project.id,
        userId: user.id,
        mode: "oauth" as const,
        teamSlug: "team-a",
        projectSlug: "app-b",
        deploymentUrl: "https://happy-animal-123.example",
        deploymentName: "happy-animal-123",
        adminKey,
        accessToken: "oauth-access-token-456",
        backendProjectId: 9_007_199_254,
      };
      await upsertCredentials(sql, input, box);
      const raw = await sql.query<Record<string, unknown>>(
        "select * from backend_project_credentials where project_id = $1",
        [project.id],
      );
      expect(JSON.stringify(raw.rows)).not.toContain("secret-deploy-key-123");
      expect(JSON.stringify(raw.rows)).not.toContain("oauth-access-token-456");
      expect(await getCredentials(sql, project.id, box)).toMatchObject(input);

      await upsertCredentials(sql, { ...input, mode: "managed", accessToken: null, adminKey: "project:t:p|other" }, box);
      expect(await getCredentials(sql, project.id, box)).toMatchObject({ mode: "managed", accessToken: null, adminKey: "project:t:p|other" });

      expect(await deleteCredentials(sql, project.id)).toBe(true);
      expect(await getCredentials(sql, project.id, box)).toBeNull();
      expect(await deleteCredentials(sql, project.id)).toBe(false);
    });

    it("journals operations under a lease: one running per project, takeover only once abandoned", async () => {
      const { user } = await createTestUser(sql);
      const project = await insertProject(sql, { ownerId: user.id, name: "ops" });
      const holder = async (leaseOwner: string): Promise<LeaseHolder> => ({ leaseOwner, instance: await liveInstance(sql), leaseMs: 60_000 });
      const op = await insertRunningOperation(sql, { ...(await holder("a")), projectId: project.id, kind: "enable" });
      expect(op).toMatchObject({ abandoned: false, ownerInstanceId: expect.any(String), ownerBootId: expect.any(String) });
      await expect(insertRunningOperation(sql, { ...(await holder("b")), projectId: project.id, kind: "enable" })).rejects.toThrow();
      expect(await takeOverAbandonedOperation(sql, op.id, await holder("b"))).toBeNull();
      expect(await recordSteps(sql, op.id, "a", 60_000, { provisioned: { deploymentName: "d" } })).toBe(true);
      expect(await recordSteps(sql, op.id, "b", 60_000, { injected: true })).toBe(false);

      await sql.query("update enable_operations set lease_expires_at = now() - interval '1 second' where id = $1", [op.id]);
      expect(await getRunningOperation(sql, project.id)).toMatchObject({ id: op.id, abandoned: true });
      const [first, second] = await Promise.all([
        takeOverAbandonedOperation(sql, op.id, await holder("b")),
        takeOverAbandonedOperation(sql, op.id, await holder("c")),
      ]);
      const winner = first ?? second;
      expect([first, second].filter(Boolean)).toHaveLength(1);
      expect(winner?.steps).toEqual({ provisioned: { deploymentName: "d" } });
      expect(await recordSteps(sql, op.id, "a", 60_000, { injected: true })).toBe(false);
      expect(await finishOperation(sql, op.id, winner!.leaseOwner!, { status: "failed", errorMessage: "quota" })).toBe(true);
      expect(await getRunningOperation(sql, project.id)).toBeNull();
      expect(await getLatestOperation(sql, project.id)).toMatchObject({ status: "failed", errorMessage: "quota" });
      // A new run may start once the previous one ended.
      await insertRunningOperation(sql, { ...(await holder("d")), projectId: project.id, kind: "enable" });
    });

    it("counts a run abandoned as soon as its instance restarted or stopped beating, whatever its lease", async () => {
      const { user } = await createTestUser(sql);
      const start = async (instance: InstanceIdentity) => {
        const project = await insertProject(sql, { ownerId: user.id, name: "owned" });
        const op = await insertRunningOperation(sql, { leaseOwner: "old", instance, leaseMs: 600_000, projectId: project.id, kind: "enable" });
        return { project, op };
      };
      const taker: LeaseHolder = { leaseOwner: "new", instance: await liveInstance(sql), leaseMs: 600_000 };

      // Same instance id, new boot: the process restarted.
      const restarted = await liveInstance(sql);
      const run = await start(restarted);
      expect((await getRunningOperation(sql, run.project.id))?.abandoned).toBe(false);
      expect(await takeOverAbandonedOperation(sql, run.op.id, taker)).toBeNull();
      await registerInstance(sql, { instanceId: restarted.instanceId, bootId: crypto.randomUUID() }, 60_000);
      expect(await renewInstance(sql, restarted, 60_000)).toBe(false);
      expect((await getRunningOperation(sql, run.project.id))?.abandoned).toBe(true);
      expect(await takeOverAbandonedOperation(sql, run.op.id, taker)).toMatchObject({ leaseOwner: "new", ownerBootId: taker.instance.bootId });

      // Heartbeat stopped: its last renewal expired.
      const silent = await liveInstance(sql);
      const other = await start(silent);
      expect(await renewInstance(sql, silent, 60_000)).toBe(true);
      expect((await getRunningOperation(sql, other.project.id))?.abandoned).toBe(false);
      await sql.query("update app_instances set expires_at = now() - interval '1 second' where instance_id = $1", [silent.instanceId]);
      expect((await getRunningOperation(sql, other.project.id))?.abandoned).toBe(true);
      expect(await takeOverAbandonedOperation(sql, other.op.id, taker)).toMatchObject({ leaseOwner: "new" });
    });

    it("rolls back a failed transaction", async () => {
      const { user } = await createTestUser(sql);
      await expect(
        sql.transaction(async (tx) => {
          await insertProject(tx, { ownerId: user.id, name: "rolled back" });
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await listProjects(sql, user.id)).toEqual([]);
    });
  });
}
