import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GET as errorStreamRoute } from "@/app/api/projects/[id]/errors/stream/route";
import { GET as statusRoute } from "@/app/api/backend/status/route";
import { startBackendDevServerLeaseCheck } from "@/lib/cloud/backend-dev-server-leases";
import { getConfig, reloadConfig } from "@/lib/config";
import { APP_DEV_SERVER_ROLE, ensureAppDevServer, stopAppDevServer } from "@/lib/dev-servers";
import { MISSED_HEARTBEATS } from "@/lib/instance";
import { getRealtime } from "@/lib/realtime";
import { APP_DIR, findProcessesByRole, getSandboxProvider } from "@/lib/sandbox";
import { isProcessAlive } from "@/lib/sandbox/drivers/local-os-processes";
import { resetProcessSingleton, resetProcessSingletons } from "@/lib/singletons";
import { getStore, type Sql } from "@/lib/store";
import { getDevServerLease } from "@/lib/store/dev-server-leases";
import type { Project } from "@/lib/store/projects";
import { insertConnectedProject } from "../helpers/connected-project";
import { createDevServerControl } from "../e2e/dev-server-control";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { startServiceInstance, type ServiceInstance } from "../helpers/service-instances";
import { createTestUser } from "../helpers/users";
import { SseReader } from "../realtime/sse-client";

// Issue 18 parts 3 and 4, acceptance: this process is instance B; instance A runs in a process
// of its own (tests/helpers/service-instance.ts: lib/startup's start and shutdown, real route
// handlers) on the same PostgreSQL and DATA_DIR (local sandboxes, secrets key). The backend dev
// server is the controllable stand-in of the browser tests.

const INSTANCE_A = "instance-a";
const INSTANCE_B = "instance-b";

/** Polls `check` every 100 ms until it holds; answers how long that took. */
async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describeWithPostgres("backend dev server ownership across two instances on one PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let db: Sql;
  let owner: Awaited<ReturnType<typeof createTestUser>>;
  let project: Project;
  let sandboxId: string;
  let control: ReturnType<typeof createDevServerControl>;
  let stream: { reader: SseReader; abort: AbortController };
  const instances: ServiceInstance[] = [];

  async function startInstanceA(env: Record<string, string> = {}): Promise<ServiceInstance> {
    const instance = await startServiceInstance({ INSTANCE_ID: INSTANCE_A, LOG_LEVEL: "info", ...env });
    instances.push(instance);
    return instance;
  }

  const post = (instance: ServiceInstance, pathname: string, body: object) =>
    fetch(`${instance.baseUrl}${pathname}`, {
      method: "POST",
      headers: { ...owner.headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** The next notification on B's stream whose message contains `text`. */
  const notificationOnB = (text: string) =>
    stream.reader.until((frame) => frame.event !== undefined && String(JSON.parse(frame.data ?? "{}").message).includes(text));

  const lease = () => getDevServerLease(db, project.id);

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    control = createDevServerControl();
    Object.assign(process.env, { DATABASE_URL: database.url, INSTANCE_ID: INSTANCE_B, BACKEND_DEV_COMMAND: control.command });
    reloadConfig();
    db = await getStore();
    owner = await createTestUser(db, "Owner");
    // A sandbox, but no preview: no instance's start resumes this project's dev servers.
    const sandbox = await getSandboxProvider().create();
    sandboxId = sandbox.sandboxId;
    project = await insertConnectedProject(db, owner.user.id, sandboxId);
    startBackendDevServerLeaseCheck(db);

    // B's dashboard stream of the project's errors.
    const abort = new AbortController();
    const response = await errorStreamRoute(
      new Request(`http://localhost/api/projects/${project.id}/errors/stream`, { headers: owner.headers, signal: abort.signal }),
      { params: Promise.resolve({ id: project.id }) },
    );
    stream = { reader: new SseReader(response.body!), abort };
    await stream.reader.next();
    await getRealtime().ready?.();
  }, 120_000);

  afterAll(async () => {
    stream?.abort.abort();
    for (const instance of instances) instance.child.kill("SIGKILL");
    await resetProcessSingletons();
    for (const name of ["DATABASE_URL", "INSTANCE_ID", "BACKEND_DEV_COMMAND"]) delete process.env[name];
    control?.cleanup();
    await database?.drop();
  }, 60_000);

  it("a dashboard SSE stream on B receives errors from a dev server owned by A", { timeout: 120_000 }, async () => {
    const a = await startInstanceA();
    const started = await post(a, "/api/backend/dev/start", { projectId: project.id });
    expect(await started.json()).toEqual({ success: true });
    expect(await lease()).toMatchObject({ ownerInstanceId: INSTANCE_A, held: true, pid: expect.any(Number) });

    const text = `Error: scanned on A ${crypto.randomUUID()}`;
    control.triggerError(text);
    const frames = await notificationOnB(text);
    expect(JSON.parse(frames.at(-1)!.data!)).toMatchObject({ type: "backend-error", message: expect.stringContaining(text) });
  });

  it("B, a second server process on the sandbox, answers a status request and a preview without stopping or doubling A's dev servers", { timeout: 120_000 }, async () => {
    const [a] = instances;
    // The app directory the app dev server runs in (the sandbox was made without a template).
    await (await getSandboxProvider().connect(sandboxId)).files.write(`${APP_DIR}/package.json`, "{}");
    const started = await fetch(`${a.baseUrl}/test/app-dev-server?sandboxId=${sandboxId}`, { method: "POST" });
    expect(started.status, a.output()).toBe(200);
    const { previewUrl } = (await started.json()) as { previewUrl: string };
    expect((await fetch(previewUrl)).status).toBe(200);
    const backendDev = (await lease())!;
    expect(backendDev).toMatchObject({ ownerInstanceId: INSTANCE_A, held: true });

    // B's first touch of the sandboxes, as in a server process that never attached them.
    await resetProcessSingleton("sandboxProvider");
    const status = await statusRoute(new Request(`http://localhost/api/backend/status?projectId=${project.id}`, { headers: owner.headers }), undefined);
    expect(status.status).toBe(200);
    const sandbox = await getSandboxProvider().connect(sandboxId);
    // A's app dev server counts as running on B: B answers its preview and starts none of its own.
    expect(await ensureAppDevServer(sandbox)).toBe(previewUrl);
    const appDev = await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE);
    expect(appDev).toHaveLength(1);
    // Nor can B stop what A owns.
    expect(await stopAppDevServer(sandbox)).toBe(false);

    expect(await isProcessAlive(appDev[0].pid)).toBe(true);
    expect(await isProcessAlive(backendDev.pid!)).toBe(true);
    expect((await fetch(previewUrl)).status).toBe(200);
    expect(await lease()).toMatchObject({ ownerInstanceId: INSTANCE_A, held: true, pid: backendDev.pid });
    const text = `Error: still scanned on A ${crypto.randomUUID()}`;
    control.triggerError(text);
    await notificationOnB(text);
  });

  it("kill -9 A: B re-attaches the dev server (local sandbox: restarts it) and scans its output", { timeout: 120_000 }, async () => {
    const [a] = instances;
    const before = (await lease())!;
    expect(before.ownerInstanceId).toBe(INSTANCE_A);

    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await a.exited;
    await waitFor("B to hold the lease of a started server", 60_000, async () => {
      const now = await lease();
      return now?.ownerInstanceId === INSTANCE_B && now.held;
    });
    const reattachMs = Date.now() - killedAt;
    const { INSTANCE_HEARTBEAT_MS, BACKEND_DEV_LEASE_CHECK_MS } = getConfig();
    console.log(
      `kill -9 A -> B re-attached the backend dev server in ${reattachMs} ms ` +
        `(design bound: ${MISSED_HEARTBEATS} x INSTANCE_HEARTBEAT_MS ${INSTANCE_HEARTBEAT_MS} + BACKEND_DEV_LEASE_CHECK_MS ${BACKEND_DEV_LEASE_CHECK_MS} + a start)`,
    );
    await control.waitForAdminKeys(2, 30_000);

    // A's server died with A (its command host), so only B's reads the next trigger.
    await waitFor("A's dev server to end", 30_000, async () => !(await isProcessAlive(before.pid)));
    const text = `Error: scanned on B ${crypto.randomUUID()}`;
    control.triggerError(text);
    await notificationOnB(text);
  });

  it("SIGTERM on A: the in-flight request completes, A hands its lease back (B takes it without waiting for A's heartbeat to expire) and exits 0", { timeout: 120_000 }, async () => {
    const a = await startInstanceA({ SHUTDOWN_DRAIN_MS: "60000" });
    expect(await (await post(a, "/api/backend/dev/start", { projectId: project.id })).json()).toEqual({ success: true });
    expect(await lease()).toMatchObject({ ownerInstanceId: INSTANCE_A, held: true });

    const release = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cbs-held-")), "release");
    const held = fetch(`${a.baseUrl}/test/held?release=${encodeURIComponent(release)}`);
    held.catch(() => undefined); // awaited below; a failure before then must not go unhandled
    await waitFor("the held request to reach A", 30_000, async () => fs.existsSync(`${release}.held`));

    a.child.kill("SIGTERM");
    // New connections are refused while the held request still runs.
    await waitFor("A to refuse connections", 30_000, () =>
      fetch(`${a.baseUrl}/api/backend/status?projectId=${project.id}`, { headers: owner.headers }).then(
        () => false,
        (error: Error) => (error.cause as NodeJS.ErrnoException | undefined)?.code === "ECONNREFUSED",
      ),
    );
    expect(fs.existsSync(release)).toBe(false);
    fs.writeFileSync(release, "");
    const answer = await held;
    expect([answer.status, await answer.json()]).toEqual([200, { released: true }]);
    expect(await a.exited, a.output()).toBe(0);

    // A's boot still counts as alive for a few beats: only a handed-back lease can be B's now.
    expect((await lease())?.ownerInstanceId).not.toBe(INSTANCE_A);
    const takenMs = await waitFor("B to take the handed-back lease", 60_000, async () => (await lease())?.ownerInstanceId === INSTANCE_B);
    console.log(`SIGTERM A -> exit 0 -> B took the handed-back lease ${takenMs} ms after A's exit`);
  });
});
