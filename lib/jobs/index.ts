import { getConfig, type Config } from "@/lib/config";
import { errorChannel, getRealtime, publishWithRetry } from "@/lib/realtime";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import { getStore, type Sql } from "@/lib/store";
import pgBossDriver from "./drivers/pg-boss";
import type { JobChange, JobHandler, JobInput, JobQueue, JobQueueOptions, JobRecord } from "./port";
import { JOB_HANDLERS, JOB_KINDS } from "./work";

export type { JobChange, JobError, JobInput, JobQueue, JobRecord, JobState } from "./port";
export { JOB_KINDS } from "./work";

/** The event a job's state changes are published as, on its project's channel. */
export const JOB_EVENT = "job-progress";

/** The queue options the configuration sets. */
function jobQueueOptionsOf(config: Config): Omit<JobQueueOptions, "handlers" | "onChange"> {
  return {
    concurrency: config.JOBS_CONCURRENCY,
    globalConcurrency: config.JOBS_GLOBAL_CONCURRENCY,
    sandboxConcurrency: config.JOBS_SANDBOX_CONCURRENCY,
    expireSeconds: config.JOBS_EXPIRE_SECONDS,
    retryLimit: config.JOBS_RETRY_LIMIT,
    retryDelaySeconds: config.JOBS_RETRY_DELAY_SECONDS,
    pollMs: config.JOBS_POLL_MS,
  };
}

/**
 * A queue on the store: pg-boss on PostgreSQL when DATABASE_URL is set, else pg-boss on the
 * embedded PGlite (the same queue, sharing the store's one connection).
 */
function createJobQueue(
  config: Config,
  sql: Sql,
  handlers: Record<string, JobHandler>,
  onChange?: (change: JobChange) => void,
): Promise<JobQueue> {
  return pgBossDriver({ sql, connectionString: config.DATABASE_URL, handlers, onChange, ...jobQueueOptionsOf(config) });
}

// Progress goes where the project's dashboards listen; a lost event is logged, the status route still answers.
function publishChange(change: JobChange): void {
  if (!change.projectId) return;
  const { id, kind, state, attempt, error } = change;
  void publishWithRetry(getRealtime(), errorChannel(change.projectId), JOB_EVENT, { id, kind, state, attempt, error });
}

const JOB_QUEUE = "jobQueue";

async function openJobQueue(): Promise<JobQueue> {
  const config = getConfig();
  const queue = await createJobQueue(config, await getStore(), JOB_HANDLERS, publishChange);
  await queue.schedule?.(JOB_KINDS.bundleCleanup, config.JOBS_CLEANUP_CRON);
  if (config.REPOSITORY_AUTOSAVE_CRON === "off") await queue.unschedule?.(JOB_KINDS.repositoryAutosave);
  else await queue.schedule?.(JOB_KINDS.repositoryAutosave, config.REPOSITORY_AUTOSAVE_CRON);
  return queue;
}

/**
 * The process-wide job queue, started on first use: from then on this instance takes jobs.
 * Closed with the singletons (before the store), draining its running jobs.
 */
export function getJobQueue(): Promise<JobQueue> {
  return processSingleton(JOB_QUEUE, () => {
    const pending = openJobQueue();
    pending.catch(() => resetProcessSingleton(JOB_QUEUE, pending));
    return pending;
  }, { close: (pending) => pending.then((queue) => queue.stop(), () => undefined) });
}

/** Stops taking jobs and waits up to 30 s for the running ones, then closes the queue (graceful shutdown). */
export function stopJobQueue(): Promise<void> {
  return resetProcessSingleton(JOB_QUEUE);
}

/** Where a project's job answers its status (the 202's Location). */
export const projectJobPath = (projectId: string, jobId: string) =>
  `/api/projects/${encodeURIComponent(projectId)}/jobs/${encodeURIComponent(jobId)}`;

/**
 * Queues a job of `kind` for the project → the job, queued. Jobs of one project share its
 * sandbox, so they count against one JOBS_SANDBOX_CONCURRENCY.
 */
export async function enqueueProjectJob(kind: string, projectId: string, payload?: JobInput["payload"]): Promise<JobRecord> {
  const queue = await getJobQueue();
  const id = await queue.enqueue(kind, { projectId, sandboxKey: projectId, payload });
  const job = await queue.get(id);
  if (!job) throw new Error(`The queued job ${id} is gone.`);
  return job;
}

/** The project's job `jobId`; null when there is none or it is another project's. */
export async function getProjectJob(projectId: string, jobId: string): Promise<JobRecord | null> {
  const job = await (await getJobQueue()).get(jobId);
  return job?.projectId === projectId ? job : null;
}
