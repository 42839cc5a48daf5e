import { afterAll, beforeAll, expect, it } from "vitest";
import { reloadConfig } from "@/lib/config";
import { resetProcessSingletons } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { insertProject, type Project } from "@/lib/store/projects";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { startServiceInstance, type ServiceInstance } from "../helpers/service-instances";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";
import { createTestUser } from "../helpers/users";

// Issue 36 part 3, acceptance: two instances (processes of their own) on one PostgreSQL behind a
// proxy the test cuts and restores, the same fault to them as a database restart.

const WORKERS = 20;

describeWithPostgres("a database restart under 20-concurrent traffic on two instances", () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let proxy: TcpProxy;
  let owner: Awaited<ReturnType<typeof createTestUser>>;
  let project: Project;
  const instances: ServiceInstance[] = [];

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    const direct = new URL(database.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(database.url);
    proxied.port = String(proxy.port);
    Object.assign(process.env, { DATABASE_URL: proxied.toString() });
    reloadConfig();
    const db = await getStore();
    owner = await createTestUser(db, "Owner");
    project = await insertProject(db, { ownerId: owner.user.id, name: "traffic" });
    for (const id of ["instance-a", "instance-b"]) instances.push(await startServiceInstance({ INSTANCE_ID: id, DATABASE_URL: proxied.toString() }));
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) instance.child.kill("SIGKILL");
    await resetProcessSingletons();
    delete process.env.DATABASE_URL;
    await proxy?.close();
    await database?.drop();
  }, 60_000);

  it("answers 200, or 503 store_unavailable with Retry-After; never 500", { timeout: 180_000 }, async () => {
    const outcomes: { phase: string; status: number; code?: string; retryAfter: string | null }[] = [];
    let phase = "before";
    let running = true;
    const worker = async (index: number) => {
      for (let turn = 0; running; turn++) {
        const instance = instances[(index + turn) % instances.length];
        const response = await fetch(`${instance.baseUrl}/api/backend/status?projectId=${project.id}`, { headers: owner.headers }).catch(() => null);
        if (!response) {
          outcomes.push({ phase, status: 0, retryAfter: null });
          continue;
        }
        const body = (await response.json()) as { error?: { code: string } };
        outcomes.push({ phase, status: response.status, code: body.error?.code, retryAfter: response.headers.get("retry-after") });
        if (response.status === 503) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const workers = Array.from({ length: WORKERS }, (_, index) => worker(index));
    await pause(2_000);
    phase = "outage";
    await proxy.cut();
    await pause(3_000);
    await proxy.restore();
    phase = "after";
    await pause(5_000);
    running = false;
    await Promise.all(workers);
    for (const instance of instances) expect(instance.child.exitCode, instance.output().slice(-3000)).toBeNull();

    const count = (predicate: (outcome: (typeof outcomes)[number]) => boolean) => outcomes.filter(predicate).length;
    console.log(
      `requests ${outcomes.length}: 200 ${count((o) => o.status === 200)}, 503 ${count((o) => o.status === 503)} ` +
        `(during the outage ${count((o) => o.phase === "outage" && o.status === 503)}), other ${count((o) => o.status !== 200 && o.status !== 503)}`,
    );
    expect(outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 503)).toEqual([]);
    for (const outcome of outcomes.filter((candidate) => candidate.status === 503)) {
      expect(outcome).toMatchObject({ code: "store_unavailable", retryAfter: expect.stringMatching(/^\d+$/) });
    }
    expect(count((o) => o.phase === "before" && o.status === 200)).toBeGreaterThan(0);
    expect(count((o) => o.phase === "outage" && o.status === 503)).toBeGreaterThan(0);
    // Back once the database is: the last requests of every worker succeed.
    expect(outcomes.slice(-WORKERS).every((outcome) => outcome.status === 200)).toBe(true);
  });
});
