/** Where a job is: waiting (first time or for a retry), running on some instance, or done. */
export type JobState = "queued" | "running" | "succeeded" | "failed";

/** Why a job failed: an AppError's code and message, else `job_failed` with the (redacted) message. */
export interface JobError {
  code: string;
  message: string;
}

/** What a caller queues. */
export interface JobInput {
  /** The project the job works for: its status is the project owner's, its progress goes to the project's channel. */
  projectId?: string;
  /** Jobs on one key run at most JOBS_SANDBOX_CONCURRENCY at a time, across instances. */
  sandboxKey?: string;
  /** The handler's input; JSON. */
  payload?: unknown;
}

/** A job as the status route shows it. */
export interface JobRecord {
  id: string;
  kind: string;
  state: JobState;
  projectId: string | null;
  /** Runs started so far, retries included; 0 while first queued. */
  attempts: number;
  /** What the handler returned, once succeeded. */
  result: unknown;
  error: JobError | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A job being run, as its handler gets it. */
export interface RunningJob {
  id: string;
  kind: string;
  input: JobInput;
  /** 1 on the first run. */
  attempt: number;
}

/**
 * Runs a job: what it resolves to is the job's result. An AppError below 500 fails the job at
 * once (the input is wrong, a retry would fail alike); anything else thrown is retried with
 * backoff until the retry limit, then fails the job.
 */
export type JobHandler = (job: RunningJob) => Promise<unknown>;

/** A state change, as `onChange` reports it (progress events). */
export interface JobChange {
  id: string;
  kind: string;
  projectId: string | null;
  state: JobState;
  attempt: number;
  error?: JobError;
}

/**
 * The job-queue port. Jobs are durable in the driver's store: any instance takes queued ones,
 * and a job whose instance died is retried on another once its expiry passes.
 */
export interface JobQueue {
  /** Driver name. */
  readonly name: string;
  /** Queues a job of `kind` (one of the handlers' kinds); resolves to its id. */
  enqueue(kind: string, input?: JobInput): Promise<string>;
  /** The job with `id`, or null when there is none (or `id` is no job id). */
  get(id: string): Promise<JobRecord | null>;
  /** Queues a job of `kind` on the cron `cron` (UTC), once across instances. */
  schedule?(kind: string, cron: string, input?: JobInput): Promise<void>;
  /** Removes the schedule of `kind`, if any. */
  unschedule?(kind: string): Promise<void>;
  /**
   * Stops taking jobs, waits up to `timeoutMs` for the running ones (drain), then releases the
   * driver's connections. Jobs still running then are retried elsewhere after their expiry.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

export interface JobQueueOptions {
  /** What runs each kind of job; the queue takes jobs of these kinds only. */
  handlers: Record<string, JobHandler>;
  /** Jobs this instance runs at once. */
  concurrency: number;
  /** Jobs running at once across every instance on the store. */
  globalConcurrency: number;
  /** Jobs running at once on one `sandboxKey`. */
  sandboxConcurrency: number;
  /**
   * A running job is given up (and retried) once its instance has not renewed it for this long:
   * the instance died, or stop() left the job behind. Live instances renew their jobs every third of it.
   */
  expireSeconds: number;
  retryLimit: number;
  /** The first retry's delay; each next one doubles it. */
  retryDelaySeconds: number;
  /** How often an idle queue looks for jobs queued elsewhere. */
  pollMs: number;
  /** Called on every state change; must not throw. */
  onChange?: (change: JobChange) => void;
}

/** A driver is a plain factory from its options to a started port instance. */
export type JobQueueDriverFactory<Options> = (options: Options & JobQueueOptions) => Promise<JobQueue>;
