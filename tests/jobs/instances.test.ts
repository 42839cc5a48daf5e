import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { POST as bundlesRoute } from "@/app/api/projects/[id]/bundles/route";
import { reloadConfig } from "@/lib/config";
import { getJobQueue } from "@/lib/jobs";
import { APP_DIR, APP_TEMPLATE, getSandboxProvider } from "@/lib/sandbox";
import { resetProcessSingletons } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { insertProject, updateProjectSandbox, type Project } from "@/lib/store/projects";
import { startS3rver, type S3rverHandle } from "../blob/s3rver";
import { STAND_IN_EXPORT_COMMAND } from "../helpers/export-stand-in";
import { awaitQueuedJob, pollJob } from "../helpers/jobs";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { createTestUser } from "../helpers/users";

const INSTANCE_A = path.join(process.cwd(), "tests", "helpers", "jobs-instance.ts");
const dataDir = process.env.DATA_DIR!;
const exportLog = path.join(dataDir, "exports.log");

// The export stand-in, logging its start and end (appends are atomic), so the log's order shows
// how many ran at once, on both instances.
const FAKE_EXPORT = [`echo "start $PWD" >> ${exportLog}`, STAND_IN_EXPORT_COMMAND, `echo "end $PWD" >> ${exportLog}`].join(" && ");

/** A's export for the crash: records its shell's pid, then blocks until the process is killed. */
const blockedMarker = path.join(dataDir, "blocked-export.pid");
const BLOCKING_EXPORT = `echo $$ > ${blockedMarker}.tmp && mv ${blockedMarker}.tmp ${blockedMarker} && exec sleep 600`;

const JOB_SETTINGS = {
  JOBS_CONCURRENCY: "2",
  JOBS_GLOBAL_CONCURRENCY: "3",
  JOBS_SANDBOX_CONCURRENCY: "1",
  JOBS_EXPIRE_SECONDS: "4",
  JOBS_RETRY_DELAY_SECONDS: "1",
  JOBS_POLL_MS: "200",
};

/** Starts instance A; resolves once it takes jobs, with the id of the job it queued (if any). */
async function startInstanceA(env: Record<string, string>): Promise<{ child: ChildProcess; jobId: string | null; stderr: () => string }> {
  const child = spawn(process.execPath, ["--import", "tsx", INSTANCE_A], {
    env: { ...process.env, ...env, INSTANCE_ID: "instance-a" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const ready = stdout.split("\n").find((candidate) => candidate.startsWith("{"));
      if (ready) resolve(ready);
    });
    child.once("exit", (code) => reject(new Error(`Instance A ended with ${code}:\n${stderr}`)));
  });
  return { child, jobId: (JSON.parse(line) as { jobId: string | null }).jobId, stderr: () => stderr };
}

const exited = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once("exit", resolve)));

describeWithPostgres("background jobs on two instances (PostgreSQL, S3)", { timeout: 180_000 }, () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let s3rver: S3rverHandle;
  let owner: Awaited<ReturnType<typeof createTestUser>>;
  let env: Record<string, string>;
  const sandboxes: string[] = [];

  async function newProject(name: string): Promise<Project> {
    const db = await getStore();
    const sandbox = await getSandboxProvider().create({ template: APP_TEMPLATE });
    sandboxes.push(sandbox.sandboxId);
    // The stand-in export needs no packages: without them each build's checkout is a few files, not the whole toolchain.
    await sandbox.commands.run("rm -rf node_modules", { cwd: APP_DIR });
    const inserted = await insertProject(db, { ownerId: owner.user.id, name });
    await updateProjectSandbox(db, inserted.id, { sandboxId: sandbox.sandboxId, previewUrl: null });
    return { ...inserted, sandboxId: sandbox.sandboxId };
  }

  const postBundle = (project: Project) =>
    bundlesRoute(new Request(`http://localhost/api/projects/${project.id}/bundles`, { method: "POST", headers: { ...owner.headers, "content-type": "application/json" } }), {
      params: Promise.resolve({ id: project.id }),
    });

  beforeAll(async () => {
    [database, s3rver] = await Promise.all([createThrowawayDatabase(), startS3rver()]);
    // This process is instance B; A shares its database, blob store and data directory (sandboxes).
    env = {
      DATABASE_URL: database.url,
      BLOB_DRIVER: "s3",
      S3_ENDPOINT: s3rver.endpoint,
      S3_BUCKET: s3rver.bucket,
      S3_ACCESS_KEY_ID: "S3RVER",
      S3_SECRET_ACCESS_KEY: "S3RVER",
      S3_FORCE_PATH_STYLE: "true",
      BUNDLE_EXPORT_COMMAND: FAKE_EXPORT,
      ...JOB_SETTINGS,
    };
    Object.assign(process.env, env);
    reloadConfig();
    owner = await createTestUser(await getStore(), "Owner");
  });

  afterAll(async () => {
    for (const sandboxId of sandboxes) await getSandboxProvider().kill(sandboxId).catch(() => undefined);
    await resetProcessSingletons();
    for (const name of Object.keys(env ?? {})) delete process.env[name];
    reloadConfig();
    await s3rver?.stop();
    await database?.drop();
  });

  it("kill -9 of instance A in the middle of a bundle build: the job completes on B, and the bundle is served", async () => {
    const project = await newProject("Crashing build");
    const a = await startInstanceA({ ...env, BUNDLE_EXPORT_COMMAND: BLOCKING_EXPORT, ENQUEUE_PROJECT_ID: project.id });
    const blockedShell = await (async () => {
      while (!fs.existsSync(blockedMarker)) await new Promise((resolve) => setTimeout(resolve, 100));
      return Number(fs.readFileSync(blockedMarker, "utf8"));
    })();
    // A is exporting: it dies without a word, as a crashed machine would.
    a.child.kill("SIGKILL");
    await exited(a.child);
    // The export A's sandbox command host started may outlive A: end it, B exports anew.
    try {
      process.kill(blockedShell, "SIGKILL");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }

    // B takes the job once it expires (JOBS_EXPIRE_SECONDS) and retries it with its own export.
    await getJobQueue();
    const job = await pollJob(project.id, a.jobId!, owner.headers);
    expect(job, a.stderr()).toMatchObject({ kind: "bundle-build", state: "succeeded", attempts: 2, result: { success: true } });
    const { bundleUrl, manifestUrl, commitSha } = job.result as { bundleUrl: string; manifestUrl: string; commitSha: string };
    const bundle = await fetch(bundleUrl);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).trim()).toBe(commitSha);
    expect((await (await fetch(manifestUrl)).json()).metadata).toMatchObject({ commitSha });
  });

  it("20 concurrent bundle requests queue under the concurrency limits of two instances, and none is lost", async () => {
    const projects = await Promise.all(["one", "two", "three", "four"].map((name) => newProject(`Busy ${name}`)));
    fs.rmSync(exportLog, { force: true });
    const a = await startInstanceA(env);
    try {
      await getJobQueue();
      const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => postBundle(projects[n % projects.length])));
      const jobs = await Promise.all(responses.map((response) => awaitQueuedJob(response, owner.headers)));
      expect(new Set(jobs.map((job) => job.id)).size).toBe(20);
      expect(jobs.map((job) => job.state)).toEqual(Array(20).fill("succeeded"));
      for (const job of jobs) {
        const { bundleUrl, commitSha } = job.result as { bundleUrl: string; commitSha: string };
        expect((await (await fetch(bundleUrl)).text()).trim()).toBe(commitSha);
      }

      // Replay the export log: never more than JOBS_GLOBAL_CONCURRENCY at once, one per sandbox.
      let running = 0;
      let most = 0;
      const perSandbox = new Map<string, number>();
      const sandboxOf = (line: string) => line.split("/sandboxes/")[1].split("/")[0];
      const ours = new Set(projects.map((project) => project.sandboxId));
      const lines = fs.readFileSync(exportLog, "utf8").trim().split("\n").filter((line) => ours.has(sandboxOf(line)));
      expect(lines).toHaveLength(40);
      for (const line of lines) {
        const [event] = line.split(" ");
        const sandbox = sandboxOf(line);
        const delta = event === "start" ? 1 : -1;
        running += delta;
        perSandbox.set(sandbox, (perSandbox.get(sandbox) ?? 0) + delta);
        most = Math.max(most, running);
        expect(perSandbox.get(sandbox)).toBeLessThanOrEqual(1);
      }
      expect(most).toBeLessThanOrEqual(3);
    } finally {
      a.child.kill("SIGTERM");
      await exited(a.child);
    }
  });
});
