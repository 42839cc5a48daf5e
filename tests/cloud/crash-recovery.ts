import crypto from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunPoint } from "@/lib/cloud/provisioning-run";
import { reloadConfig } from "@/lib/config";
import { closeStore } from "@/lib/store";
import { getCredentials } from "@/lib/store/credentials";
import { getProject } from "@/lib/store/projects";
import { outcomeOf, startCrashWorker, type CrashWorker } from "../helpers/crash-workers";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { startCloudFixture, type CloudFixture } from "./fixture";

/**
 * Crash safety (issue 14): a server process is SIGKILLed at every step boundary of a run, then a
 * second process retries once. Both are real processes (tests/helpers/crash-worker.ts) sharing one
 * PostgreSQL database with this test, whose emulator (same database) counts backend projects.
 */
/** A kill the emulator performs: when the request reaches it, or after it handled it (the answer is then lost). */
export interface UpstreamKill {
  path: "create_project" | "create_deploy_key";
  when: "received" | "answered";
  /** A transient 503 answers the first such request; the kill hits the run's retry of it. */
  afterBlip?: boolean;
}

export interface KillPoint {
  name: string;
  flow?: "enable" | "connect";
  /** The worker kills itself at this point of its run... */
  at?: RunPoint;
  /** ...or the emulator kills it around an upstream call. */
  upstream?: UpstreamKill;
  /** The retry runs under another instance id: the dead one is detected by its heartbeat expiring, not by a new boot. */
  otherInstance?: boolean;
}

export const KILL_POINTS: KillPoint[] = [
  { name: "after claiming the run, before anything upstream", at: "claimed" },
  { name: "when the create request reached upstream, before it was handled", upstream: { path: "create_project", when: "received" } },
  { name: "after upstream created the project, before its answer arrived", upstream: { path: "create_project", when: "answered" } },
  { name: "between the upstream create's answer and the journal write", at: "done:created" },
  { name: "after journaling the created project", at: "created" },
  { name: "when the provision request reached upstream, before it was handled", upstream: { path: "create_deploy_key", when: "received" } },
  { name: "after upstream provisioned, before its answer arrived", upstream: { path: "create_deploy_key", when: "answered" } },
  { name: "between the provision answer and the journal write", at: "done:provisioned" },
  { name: "after journaling the provisioned deployment", at: "provisioned" },
  { name: "after storing the credentials, before journaling it", at: "done:credentialsStored" },
  { name: "after journaling the stored credentials", at: "credentialsStored" },
  { name: "after the sandbox setup, before journaling it", at: "done:sandboxReady" },
  { name: "after journaling the sandbox setup, before connected", at: "sandboxReady" },
  { name: "after the run finished (connected)", at: "finished" },
  { name: "during the in-run retry of a create that answered 503", upstream: { path: "create_project", when: "received", afterBlip: true } },
  { name: "during the in-run retry of a provision that answered 503", upstream: { path: "create_deploy_key", when: "received", afterBlip: true } },
  { name: "managed connect: after claiming the run", flow: "connect", at: "claimed" },
  { name: "managed connect: after journaling the created project", flow: "connect", at: "created" },
  { name: "managed connect: between the provision answer and the journal write", flow: "connect", at: "done:provisioned" },
  { name: "managed connect: after storing the credentials, before journaling it", flow: "connect", at: "done:credentialsStored" },
  { name: "managed connect: after journaling the stored credentials", flow: "connect", at: "credentialsStored" },
  { name: "after journaling the created project, retried by another instance", at: "created", otherInstance: true },
  { name: "after journaling the provisioned deployment, retried by another instance", at: "provisioned", otherInstance: true },
];

/**
 * Registers the crash-recovery cases of `points` in the calling test file, with their own
 * PostgreSQL database and emulator: the kill points are split over two files so both test
 * workers share the work.
 */
export function describeCrashRecovery(points: KillPoint[]): void {
  let fx: CloudFixture;
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let trap: (UpstreamKill & { victim: CrashWorker; skip: number }) | undefined;
  const figures: { name: string; callMs: number; sinceStartMs: number; killToAnswerMs: number }[] = [];

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    process.env.DATABASE_URL = database.url;
    // Room for every kill point's project and for any duplicate a failing case creates.
    process.env.EMULATOR_PROJECT_QUOTA = String(points.length * 2);
    reloadConfig();
    fx = await startCloudFixture();
    const handle = fx.emulator.emulator.handle;
    fx.emulator.emulator.handle = async (request) => {
      const armed = trap;
      if (!armed || !new URL(request.url).pathname.endsWith(armed.path)) return handle(request);
      if (armed.skip > 0) {
        armed.skip -= 1;
        return handle(request);
      }
      trap = undefined;
      if (armed.when === "received") {
        await armed.victim.kill();
        return new Response(null, { status: 503 });
      }
      const response = await handle(request);
      await armed.victim.kill();
      return response;
    };
  });
  afterAll(async () => {
    if (figures.length > 0) {
      const sorted = (key: "callMs" | "sinceStartMs" | "killToAnswerMs") => figures.map((figure) => figure[key]).sort((a, b) => a - b);
      const summary = (key: "callMs" | "sinceStartMs" | "killToAnswerMs") => {
        const values = sorted(key);
        return `median ${values[Math.floor(values.length / 2)].toFixed(0)} ms, max ${values[values.length - 1].toFixed(0)} ms`;
      };
      console.log(
        [
          `Recovery after a SIGKILL, ${figures.length} kill points:`,
          `  the retry's enable/connect call: ${summary("callMs")}`,
          `  retry answered after the restarted process started: ${summary("sinceStartMs")}`,
          `  retry answered after the kill (process start and imports included): ${summary("killToAnswerMs")}`,
        ].join("\n"),
      );
    }
    await fx.close();
    await closeStore();
    await database.drop();
  });

  describeWithPostgres("a server killed at any step of an enable", () => {
    it.each(points)("recovers on one retry when killed $name", async (point) => {
      const project = await fx.newProject();
      const instanceId = `crash-${crypto.randomUUID()}`;
      const common = {
        PROJECT_ID: project.id,
        CRASH_FLOW: point.flow ?? "enable",
        // A lease far longer than the test may wait: recovering proves the retry did not wait for it.
        PROVISIONING_LEASE_MS: "600000",
        INSTANCE_HEARTBEAT_MS: "200",
      };
      if (point.upstream?.afterBlip) fx.emulator.emulator.faults.add({ path: point.upstream.path, status: 503 });
      const crashed = startCrashWorker({ ...common, INSTANCE_ID: instanceId, CRASH_AT: point.at ?? "" });
      if (point.upstream) trap = { ...point.upstream, victim: crashed, skip: point.upstream.afterBlip ? 1 : 0 };
      const killed = await crashed.exited;
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      const killedAt = performance.now();

      // A restarted process (same instance id, new boot) must take over at once: it may not wait at
      // all. Another instance waits only for the dead one's heartbeat to expire.
      const retried = await startCrashWorker({
        ...common,
        INSTANCE_ID: point.otherInstance ? `${instanceId}-other` : instanceId,
        PROVISIONING_WAIT_MS: point.otherInstance ? "120000" : "0",
      }).exited;
      const answeredAt = performance.now();
      const outcome = outcomeOf(retried);
      expect(outcome).toMatchObject({ ok: true, state: { kind: "connected" } });

      expect(await fx.emulatedProjects(project)).toBe(1);
      expect((await getProject(fx.db, project.id))?.backendProject).toEqual(outcome.state);
      expect(await getCredentials(fx.db, project.id)).toMatchObject({ deploymentUrl: outcome.state!.deploymentUrl });
      const { rows } = await fx.db.query<{ status: string }>("select status from enable_operations where project_id = $1", [project.id]);
      expect(rows.map((row) => row.status)).toEqual(["succeeded"]);
      figures.push({ name: point.name, callMs: outcome.callMs, sinceStartMs: outcome.sinceStartMs, killToAnswerMs: answeredAt - killedAt });
    }, 180_000);
  });
}
