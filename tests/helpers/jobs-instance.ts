/**
 * Instance A of tests/jobs/instances.test.ts: a process of its own on the shared DATABASE_URL,
 * blob store and DATA_DIR (sandboxes) that takes background jobs. With ENQUEUE_PROJECT_ID it
 * first queues a bundle build of that project itself, as if the request had reached A. Prints
 * `{ jobId }` as one JSON line once it takes jobs; SIGTERM drains it, SIGKILL is a crash.
 */
import { pathToFileURL } from "node:url";
import { enqueueProjectJob, getJobQueue, JOB_KINDS } from "@/lib/jobs";
import { resetProcessSingletons } from "@/lib/singletons";

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await getJobQueue();
  const projectId = process.env.ENQUEUE_PROJECT_ID;
  const job = projectId ? await enqueueProjectJob(JOB_KINDS.bundleBuild, projectId, {}) : null;
  process.once("SIGTERM", () => void resetProcessSingletons().finally(() => process.exit(0)));
  console.log(JSON.stringify({ jobId: job?.id ?? null }));
}
