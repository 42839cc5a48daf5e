import PgBoss from "pg-boss";
import { isAppError } from "@/lib/errors";
import { log, redactSecrets } from "@/lib/log";
import type { Sql } from "@/lib/store";
import { countOtherRunningJobs, deferJob, JOB_QUEUE_SCHEMA, jobQueueDatabaseOf, kindsWithWaitingJobs, renewRunningJob } from "@/lib/store/jobs";
import type { JobChange, JobError, JobInput, JobQueueDriverFactory, JobRecord, JobState } from "../port";

export interface PgBossQueueOptions {
  /** The store: the embedded one carries the queue itself; PostgreSQL answers the limit checks. */
  sql: Sql;
  /** PostgreSQL: the queue polls on a small pool of its own, beside the store's. Absent: the queue runs on `sql` (PGlite). */
  connectionString?: string;
}

const DRIVER_NAME = "pg-boss";

const STATES: Record<PgBoss.JobWithMetadata["state"], JobState> = {
  created: "queued",
  retry: "queued",
  active: "running",
  completed: "succeeded",
  cancelled: "failed",
  failed: "failed",
};

/**
 * What a job's `output` holds: `{ result }` when its handler resolved, `{ error }` when it failed
 * (a retried failure too), pg-boss's `{ value: { message } }` when it expired.
 */
interface Output {
  result?: unknown;
  error?: JobError;
  value?: { message?: string };
}

/** A job over a limit is back in its queue within this long (jittered): the slot it waits for may free up any moment. */
const MAX_DEFER_MS = 250;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toJobError(error: unknown): JobError {
  if (isAppError(error)) return { code: error.code, message: error.message };
  return { code: "job_failed", message: redactSecrets(error instanceof Error ? error.message : String(error)) };
}

function toRecord(job: PgBoss.JobWithMetadata<JobInput>): JobRecord {
  const output = (job.output ?? {}) as Output;
  // A completed job whose handler failed for good is recorded with its error (see run below).
  const state = job.state === "completed" && output.error ? "failed" : STATES[job.state];
  return {
    id: job.id,
    kind: job.name,
    state,
    projectId: job.data?.projectId ?? null,
    attempts: job.startedOn ? job.retryCount + 1 : job.retryCount,
    result: state === "succeeded" ? (output.result ?? null) : null,
    error: state === "failed" ? (output.error ?? { code: "job_failed", message: output.value?.message ?? "The job failed." }) : null,
    createdAt: job.createdOn,
    finishedAt: state === "succeeded" || state === "failed" ? job.completedOn : null,
  };
}

/**
 * Jobs on pg-boss: PostgreSQL (DATABASE_URL) or the embedded PGlite store. Each instance runs a
 * loop that takes one job at a time while it has a free slot; a taken job over the global or
 * sandbox limit goes back to its queue for a moment. pg-boss retries failures with backoff and,
 * in its maintenance, fails (so retries) running jobs past their expiry; a live instance renews
 * the expiry of its running jobs, so only those of a dead (or stopped) instance expire.
 */
const driver: JobQueueDriverFactory<PgBossQueueOptions> = async (options) => {
  const { sql, handlers, concurrency, onChange } = options;
  const kinds = Object.keys(handlers);
  const boss = new PgBoss({
    ...(options.connectionString ? { connectionString: options.connectionString, max: 3 } : { db: jobQueueDatabaseOf(options.sql) }),
    schema: JOB_QUEUE_SCHEMA,
    // Expired jobs are found within a third of the expiry.
    maintenanceIntervalSeconds: Math.max(1, Math.min(120, Math.floor(options.expireSeconds / 3))),
  });
  boss.on("error", (error: Error) => log.warn("job queue error", { driver: DRIVER_NAME, error }));
  await boss.start();
  for (const kind of kinds) {
    await boss.createQueue(kind, {
      name: kind,
      retryLimit: options.retryLimit,
      retryDelay: options.retryDelaySeconds,
      retryBackoff: true,
      expireInSeconds: options.expireSeconds,
    });
  }

  const running = new Set<Promise<void>>();
  let stopping = false;
  // Set when stop() gave up waiting: running jobs are left to expire and be retried elsewhere.
  let abandoned = false;
  let wake: () => void = () => {};
  const report = (change: JobChange) => onChange?.(change);

  // Over a limit: back in the queue after a random moment, so instances that took jobs of one
  // sandbox at once do not put them back and take them again in step.
  async function admitted(job: PgBoss.JobWithMetadata<JobInput>): Promise<boolean> {
    const others = await countOtherRunningJobs(sql, job.id, job.data?.sandboxKey ?? null);
    if (others.running < options.globalConcurrency && others.onSandbox < options.sandboxConcurrency) return true;
    await deferJob(sql, job.id, Math.min(options.pollMs, MAX_DEFER_MS) * (0.5 + Math.random()));
    return false;
  }

  async function run(job: PgBoss.JobWithMetadata<JobInput>): Promise<void> {
    const input = job.data ?? {};
    const attempt = job.retryCount + 1;
    const change = { id: job.id, kind: job.name, projectId: input.projectId ?? null, attempt };
    report({ ...change, state: "running" });
    // While this instance lives, the job does not expire, however long it runs.
    const heartbeat = setInterval(() => {
      if (!abandoned) renewRunningJob(sql, job.id).catch((error: unknown) => log.warn("job heartbeat failed", { jobId: job.id, error }));
    }, (options.expireSeconds * 1000) / 3).unref();
    try {
      const result = await handlers[job.name]({ id: job.id, kind: job.name, input, attempt });
      clearInterval(heartbeat);
      // A job given up at stop is another instance's by now: its late outcome is dropped.
      if (abandoned) return;
      await boss.complete(job.name, job.id, { result: result ?? null });
      report({ ...change, state: "succeeded" });
    } catch (thrown) {
      clearInterval(heartbeat);
      if (abandoned) return;
      const error = toJobError(thrown);
      if (isAppError(thrown) && thrown.status < 500) {
        // Retrying would fail alike: recorded as done, with the error (see toRecord).
        await boss.complete(job.name, job.id, { error });
        report({ ...change, state: "failed", error });
      } else {
        log.warn("job failed", { kind: job.name, jobId: job.id, attempt, error: thrown });
        await boss.fail(job.name, job.id, { error });
        report({ ...change, state: job.retryCount < options.retryLimit ? "queued" : "failed", error });
      }
    }
  }

  // Takes the next job of `kind` and starts it unless a limit holds it back; false when there was none.
  async function takeJob(kind: string): Promise<boolean> {
    const [job] = await boss.fetch<JobInput>(kind, { batchSize: 1, includeMetadata: true });
    if (!job) return false;
    if (!(await admitted(job))) return true;
    const done: Promise<void> = run(job)
      .catch((error: unknown) => log.error("job not recorded", { kind, jobId: job.id, error }))
      .finally(() => {
        running.delete(done);
        wake();
      });
    running.add(done);
    return true;
  }

  async function takeJobs(): Promise<void> {
    for (let next = 0; !stopping; ) {
      let took = false;
      try {
        // Round the kinds, one job each, so a long queue of builds does not hold up screenshots;
        // only kinds with a waiting job are taken from (a take is an update, even of nothing).
        const waiting = running.size < concurrency ? await kindsWithWaitingJobs(sql, kinds) : new Set<string>();
        for (let tried = 0; tried < kinds.length && running.size < concurrency && !stopping; tried += 1) {
          const kind = kinds[next++ % kinds.length];
          if (waiting.has(kind) && (await takeJob(kind))) took = true;
        }
      } catch (error) {
        // The database did not answer (a restart, a failover): try again after the poll interval.
        log.warn("taking jobs failed", { driver: DRIVER_NAME, error });
        took = false;
      }
      if (took && running.size < concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  const taking = takeJobs();

  return {
    name: DRIVER_NAME,
    async enqueue(kind, input = {}) {
      if (!handlers[kind]) throw new Error(`No handler for jobs of kind ${kind}.`);
      const id = await boss.send(kind, input);
      if (!id) throw new Error(`The job queue did not accept a ${kind} job.`);
      report({ id, kind, projectId: input.projectId ?? null, state: "queued", attempt: 0 });
      wake();
      return id;
    },
    async get(id) {
      if (!UUID.test(id)) return null;
      for (const kind of kinds) {
        const job = await boss.getJobById<JobInput>(kind, id, { includeArchive: true });
        if (job) return toRecord(job);
      }
      return null;
    },
    async schedule(kind, cron, input = {}) {
      await boss.schedule(kind, cron, input, { tz: "UTC" });
    },
    async unschedule(kind) {
      await boss.unschedule(kind);
    },
    async stop({ timeoutMs = 30_000 } = {}) {
      stopping = true;
      wake();
      await taking;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([Promise.allSettled(running), timeout]);
      clearTimeout(timer);
      abandoned = running.size > 0;
      await boss.stop({ graceful: false, wait: true });
    },
  };
};

export default driver;
