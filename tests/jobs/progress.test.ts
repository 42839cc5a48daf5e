import crypto from "node:crypto";
import { expect, it } from "vitest";
import { enqueueProjectJob, getJobQueue, JOB_EVENT, JOB_KINDS } from "@/lib/jobs";
import { errorChannel, getRealtime, type RealtimeMessage } from "@/lib/realtime";
import { errorNotificationSource } from "@/lib/realtime/error-notifications";
import { getStore } from "@/lib/store";
import { waitForJob } from "../contract/jobs";

// The embedded default: the service's own queue on PGlite, with the memory realtime driver.

it("publishes each state of a project's job on the project's channel, which the error stream leaves out", { timeout: 60_000 }, async () => {
  // A project that does not exist: the build fails at once, without a sandbox.
  const projectId = crypto.randomUUID();
  const events: RealtimeMessage[] = [];
  const unsubscribe = getRealtime().subscribe!(errorChannel(projectId), (message) => events.push(message));
  const notifications: unknown[] = [];
  const stopStream = errorNotificationSource(await getStore(), projectId).subscribe((event) => notifications.push(event));
  try {
    const queued = await enqueueProjectJob(JOB_KINDS.bundleBuild, projectId, {});
    const job = await waitForJob(await getJobQueue(), queued.id);
    expect(job).toMatchObject({ state: "failed", attempts: 1, error: { code: "project_not_found" } });
    await expect.poll(() => events.length).toBe(3);
    expect(events.map((event) => [event.event, event.payload])).toEqual([
      [JOB_EVENT, { id: job.id, kind: "bundle-build", state: "queued", attempt: 0 }],
      [JOB_EVENT, { id: job.id, kind: "bundle-build", state: "running", attempt: 1 }],
      [JOB_EVENT, { id: job.id, kind: "bundle-build", state: "failed", attempt: 1, error: job.error }],
    ]);
    expect(notifications).toEqual([]);
  } finally {
    unsubscribe();
    stopStream();
  }
});

it("runs the bundle cleanup of every project as a job, and schedules it daily", { timeout: 60_000 }, async () => {
  const queue = await getJobQueue();
  const job = await waitForJob(queue, await queue.enqueue(JOB_KINDS.bundleCleanup));
  expect(job).toMatchObject({ state: "succeeded", result: { commitsDeleted: 0, blobsDeleted: 0 } });
  const { rows } = await (await getStore()).query("select name, cron, options->>'tz' as tz from pgboss.schedule");
  expect(rows).toEqual([{ name: "bundle-cleanup", cron: "0 3 * * *", tz: "UTC" }]);
});
