import crypto from "node:crypto";
import path from "node:path";
import { GET as errorStreamRoute } from "@/app/api/projects/[id]/errors/stream/route";
import { backendProjectNameFor } from "@/lib/backend";
import { reloadConfig } from "@/lib/config";
import { startEmulatorServer, type EmulatorServer } from "@/lib/emulator/server";
import { createProject } from "@/lib/projects";
import { listStoredErrorNotifications } from "@/lib/realtime/error-notifications";
import { getSandboxProvider, SANDBOX_HOME } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";
import { getStore, type Sql } from "@/lib/store";
import { contractRecorder } from "../contract/openapi";
import type { Project } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";
import { SseReader } from "../realtime/sse-client";

/**
 * The product on embedded defaults with its management API pointed at an emulator served over
 * loopback HTTP, plus helpers to make projects (real local sandboxes) and count what the
 * emulator created.
 */
export async function startCloudFixture(env: Record<string, string> = {}) {
  const db = await getStore();
  const contract = contractRecorder();
  const emulator = await startEmulatorServer({ onExchange: contract.onExchange });
  Object.assign(process.env, { BACKEND_PROVIDER: "local", PROVISION_HOST: emulator.baseUrl, ...env });
  reloadConfig();
  await resetProcessSingleton("sandboxProvider");
  const owner = await createTestUser(db, "Owner");
  const sandboxes: string[] = [];

  return {
    db,
    emulator,
    owner,
    async newProject(): Promise<Project> {
      const project = await createProject(db, owner.user.id, `app-${crypto.randomBytes(4).toString("hex")}`);
      sandboxes.push(project.sandboxId!);
      return project;
    },
    async sandboxOf(project: Project) {
      return getSandboxProvider().connect(project.sandboxId!);
    },
    /** Where a sandbox path of a project's local sandbox is on this machine. */
    hostPath(project: Project, sandboxPath: string): string {
      return path.join(process.env.DATA_DIR!, "sandboxes", project.sandboxId!, "home", path.posix.relative(SANDBOX_HOME, sandboxPath));
    },
    /**
     * The project's error stream (the SSE route) as its owner reads it, from now on: resumed after
     * the newest stored notification, so the history is not replayed. `close` ends it.
     */
    async openErrorStream(project: Project): Promise<{ reader: SseReader; close(): Promise<void> }> {
      const controller = new AbortController();
      const newest = (await listStoredErrorNotifications(db, project.id)).at(-1);
      const headers = newest ? { ...owner.headers, "last-event-id": newest.id } : owner.headers;
      const response = await errorStreamRoute(
        new Request(`http://localhost/api/projects/${project.id}/errors/stream`, { headers, signal: controller.signal }),
        { params: Promise.resolve({ id: project.id }) },
      );
      if (response.status !== 200) throw new Error(`the error stream answered ${response.status}`);
      const reader = new SseReader(response.body!);
      return {
        reader,
        async close() {
          controller.abort();
          await reader.cancel().catch(() => undefined);
        },
      };
    },
    /** Backend projects the emulator created for this project. */
    async emulatedProjects(project: Project): Promise<number> {
      const { rows } = await db.query<{ count: number }>("select count(*)::int as count from emulator_projects where name = $1", [
        backendProjectNameFor(project.id),
      ]);
      return rows[0].count;
    },
    async close() {
      for (const id of sandboxes) await getSandboxProvider().kill(id);
      await emulator.close();
      contract.verify();
    },
  };
}

export type CloudFixture = Awaited<ReturnType<typeof startCloudFixture>>;
export type { EmulatorServer, Sql };
