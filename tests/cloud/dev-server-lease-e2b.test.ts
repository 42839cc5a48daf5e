import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKEND_DEV_SERVER_ROLE } from "@/lib/cloud/backend-dev-server";
import { handBackBackendDevServers, reattachOrphanedBackendDevServers } from "@/lib/cloud/backend-dev-server-leases";
import { reloadConfig } from "@/lib/config";
import { currentInstance } from "@/lib/instance";
import { listStoredErrorNotifications } from "@/lib/realtime/error-notifications";
import { APP_DIR, findProcessesByRole, roleEnvs, type Sandbox, type SandboxProvider } from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { getStore, type Sql } from "@/lib/store";
import { getDevServerLease, takeDevServerLease } from "@/lib/store/dev-server-leases";
import { registerInstance, type InstanceIdentity } from "@/lib/store/instances";
import type { Project } from "@/lib/store/projects";
import { insertConnectedProject } from "../helpers/connected-project";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";
import { createTestUser } from "../helpers/users";

// Re-attaching on E2B: the backend dev server outlives the instance that started it, so the
// instance that takes the lease connects to the running process (the SDK's commands.connect)
// instead of restarting it. The E2B driver runs on the real SDK against the local sandbox service.

let db: Sql;
let provider: SandboxProvider;
let sandbox: Sandbox;
let service: SandboxServiceProcess;
let project: Project;
let control: ReturnType<typeof controlInSandbox>;

/**
 * The stand-in backend dev server (tests/e2e/fixtures/backend-dev-on-trigger.mjs) and its control
 * directory live inside the sandbox, which sees nothing of this machine's files.
 */
function controlInSandbox(target: Sandbox) {
  const dir = `${APP_DIR}/.control`;
  const countKeys = async () =>
    (await target.files.list(`${dir}/admin-keys`).catch(() => [])).filter((entry) => !entry.name.endsWith(".tmp")).length;
  return {
    command: `node ${dir}/backend-dev-on-trigger.mjs ${dir}`,
    async install() {
      const fixture = await fs.readFile(path.resolve("tests", "e2e", "fixtures", "backend-dev-on-trigger.mjs"));
      await target.files.write(`${dir}/backend-dev-on-trigger.mjs`, fixture);
    },
    /** Makes the running stand-in print `Error: <text>` now (written, then renamed into place). */
    async triggerError(text: string) {
      await target.files.write(`${dir}/trigger.tmp`, `Error: ${text}`);
      await target.commands.run(`mv ${dir}/trigger.tmp ${dir}/trigger`);
    },
    /** Waits until the stand-in was started `count` times. */
    async waitForStarts(count: number, timeoutMs: number) {
      const deadline = Date.now() + timeoutMs;
      while ((await countKeys()) < count) {
        if (Date.now() > deadline) throw new Error(`Only ${await countKeys()} of ${count} backend dev server starts within ${timeoutMs} ms.`);
        await delay(100);
      }
    },
  };
}

/** An instance boot whose heartbeat has already expired. */
async function deadInstance(): Promise<InstanceIdentity> {
  const identity = { instanceId: `dead-${crypto.randomUUID()}`, bootId: crypto.randomUUID() };
  await registerInstance(db, identity, 0);
  return identity;
}

/** Leaves the project's lease to a dead instance, with `pid` as its server. */
async function orphanLease(pid: number): Promise<void> {
  await takeDevServerLease(db, { projectId: project.id, sandboxId: sandbox.sandboxId, owner: await deadInstance(), pid });
}

async function scanned(text: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if ((await listStoredErrorNotifications(db, project.id)).some((notification) => notification.message.includes(text))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`"${text}" was never scanned`);
}

const backendServers = async () => (await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).map((info) => info.pid);

beforeAll(async () => {
  db = await getStore();
  service = await startSandboxService(path.join(process.env.DATA_DIR!, "sandbox-service"));
  provider = createE2BSandboxProvider({ apiKey: service.apiKey, apiUrl: service.url, sandboxUrl: service.url });
  sandbox = await provider.create();
  // Where backend dev servers run (the app repository of a real sandbox).
  await sandbox.files.makeDir(APP_DIR);
  control = controlInSandbox(sandbox);
  await control.install();
  process.env.BACKEND_DEV_COMMAND = control.command;
  reloadConfig();
  const owner = await createTestUser(db, "Owner");
  project = await insertConnectedProject(db, owner.user.id, sandbox.sandboxId);
});

afterAll(async () => {
  if (sandbox) await provider.kill(sandbox.sandboxId);
  await service?.stop();
  delete process.env.BACKEND_DEV_COMMAND;
});

describe("backend dev server lease on E2B", () => {
  it("the owner died: the check connects to the running server, keeps its pid and scans its output", { timeout: 60_000 }, async () => {
    // Started by an instance that has died since.
    const handle = await sandbox.commands.run(control.command, { background: true, timeoutMs: 0, envs: roleEnvs(BACKEND_DEV_SERVER_ROLE) });
    await control.waitForStarts(1, 30_000);
    await orphanLease(handle.pid);

    const reattached = await reattachOrphanedBackendDevServers(db, { provider });
    expect(Object.fromEntries(reattached)).toEqual({ [project.id]: "connected" });
    expect(await backendServers()).toEqual([handle.pid]);
    expect(await getDevServerLease(db, project.id)).toMatchObject({ ownerInstanceId: (await currentInstance(db)).instanceId, pid: handle.pid, held: true });

    const text = `Error: after the connect ${crypto.randomUUID()}`;
    await control.triggerError(text);
    await scanned(text);
    // Held now: the next check leaves it alone.
    expect((await reattachOrphanedBackendDevServers(db, { provider })).size).toBe(0);
  });

  it("handed back at shutdown: the server keeps running, and the next owner connects to it again", { timeout: 60_000 }, async () => {
    const [pid] = await backendServers();
    expect(await handBackBackendDevServers(db)).toBe(1);
    expect(await getDevServerLease(db, project.id)).toMatchObject({ ownerInstanceId: null, pid, held: false });
    expect(await backendServers()).toEqual([pid]);

    expect(Object.fromEntries(await reattachOrphanedBackendDevServers(db, { provider }))).toEqual({ [project.id]: "connected" });
    expect(await backendServers()).toEqual([pid]);
    // Output after the second connect reaches the new owner's scanner.
    const text = `Error: after the second connect ${crypto.randomUUID()}`;
    await control.triggerError(text);
    await scanned(text);
  });

  it("the server is gone: the new owner restarts it", { timeout: 60_000 }, async () => {
    const [pid] = await backendServers();
    await orphanLease(pid + 1_000_000);

    expect(Object.fromEntries(await reattachOrphanedBackendDevServers(db, { provider }))).toEqual({ [project.id]: "restarted" });
    await control.waitForStarts(2, 30_000);
    const [restarted] = await backendServers();
    expect(restarted).not.toBe(pid);
    expect(await getDevServerLease(db, project.id)).toMatchObject({ pid: restarted, held: true });
  });
});
