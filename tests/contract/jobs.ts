import { afterEach, describe, expect, it } from "vitest";
import { NotFoundError } from "@/lib/errors";
import type { JobHandler, JobQueue, JobQueueOptions, JobRecord } from "@/lib/jobs/port";

export interface JobQueueContract {
  name: string;
  /** Starts a queue; every queue opened in one suite shares one store, as instances share a database. */
  open: (options: JobQueueOptions) => Promise<JobQueue>;
}

/** Quick settings, so retries and expiry take seconds; a test overrides what it exercises. */
export const FAST_OPTIONS: Omit<JobQueueOptions, "handlers"> = {
  concurrency: 4,
  globalConcurrency: 100,
  sandboxConcurrency: 1,
  expireSeconds: 3,
  retryLimit: 2,
  retryDelaySeconds: 1,
  pollMs: 100,
};

/** A promise with its resolve, to hold a handler until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Polls the job until `done` holds (no wall-clock assertion: the test's timeout bounds it). */
export async function waitForJob(queue: JobQueue, id: string, done: (job: JobRecord) => boolean = (job) => job.state === "succeeded" || job.state === "failed"): Promise<JobRecord> {
  for (;;) {
    const job = await queue.get(id);
    if (job && done(job)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Counts handlers running at once, overall and per key. */
function concurrencyProbe() {
  const running = new Map<string, number>();
  let now = 0;
  const max = { overall: 0, perKey: 0 };
  return {
    max,
    async around(key: string, work: () => Promise<void>) {
      now += 1;
      running.set(key, (running.get(key) ?? 0) + 1);
      max.overall = Math.max(max.overall, now);
      max.perKey = Math.max(max.perKey, running.get(key)!);
      try {
        await work();
      } finally {
        now -= 1;
        running.set(key, running.get(key)! - 1);
      }
    },
  };
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * For the tests that count jobs running at once: an expiry long enough that no job of theirs
 * expires while its completion waits on a store slowed by a loaded machine (an expired job is
 * retried, and the retry would run beside the original). Expiry has tests of its own below.
 */
const NO_EXPIRY = { expireSeconds: 60 } satisfies Partial<JobQueueOptions>;

/** The behaviour every job-queue driver must have; each driver's test file calls this once. */
export function testJobQueueDriver(contract: JobQueueContract): void {
  describe(`job queue contract: ${contract.name}`, { timeout: 60_000 }, () => {
    const opened: JobQueue[] = [];
    let suite = 0;
    // Kinds of their own per test, so no queue of another test takes its jobs.
    const kindOf = (name: string) => `t${suite}-${name}`;
    const open = async (handlers: Record<string, JobHandler>, overrides: Partial<JobQueueOptions> = {}) => {
      const queue = await contract.open({ ...FAST_OPTIONS, ...overrides, handlers });
      opened.push(queue);
      return queue;
    };

    afterEach(async () => {
      suite += 1;
      await Promise.all(opened.splice(0).map((queue) => queue.stop({ timeoutMs: 1_000 })));
    });

    it("runs a job and records its result, project and attempt", async () => {
      const kind = kindOf("echo");
      const changes: string[] = [];
      const queue = await contract.open({
        ...FAST_OPTIONS,
        handlers: { [kind]: async (job) => ({ echoed: job.input.payload, attempt: job.attempt }) },
        onChange: (change) => changes.push(change.state),
      });
      opened.push(queue);
      const id = await queue.enqueue(kind, { projectId: "p1", payload: { n: 1 } });
      const job = await waitForJob(queue, id);
      expect(job).toMatchObject({ id, kind, state: "succeeded", projectId: "p1", attempts: 1, error: null, result: { echoed: { n: 1 }, attempt: 1 } });
      expect(job.finishedAt).toBeInstanceOf(Date);
      expect(changes).toEqual(["queued", "running", "succeeded"]);
    });

    it("answers null for an unknown id or something that is no job id", async () => {
      const queue = await open({ [kindOf("none")]: async () => null });
      expect(await queue.get("00000000-0000-4000-8000-000000000000")).toBeNull();
      expect(await queue.get("not-a-job")).toBeNull();
    });

    it("retries a job that threw, then records the result", async () => {
      const kind = kindOf("flaky");
      const queue = await open({
        [kind]: async (job) => {
          if (job.attempt < 3) throw new Error(`attempt ${job.attempt} failed`);
          return "third time";
        },
      });
      const job = await waitForJob(queue, await queue.enqueue(kind));
      expect(job).toMatchObject({ state: "succeeded", attempts: 3, result: "third time" });
    });

    it("fails a job after its retries, with the last error", async () => {
      const kind = kindOf("broken");
      const queue = await open({ [kind]: async (job) => Promise.reject(new Error(`attempt ${job.attempt} failed`)) }, { retryLimit: 1 });
      const job = await waitForJob(queue, await queue.enqueue(kind));
      expect(job).toMatchObject({ state: "failed", attempts: 2, result: null, error: { code: "job_failed", message: "attempt 2 failed" } });
    });

    it("fails a job at once on an error a retry would repeat (an AppError below 500)", async () => {
      const kind = kindOf("gone");
      let runs = 0;
      const queue = await open({
        [kind]: async () => {
          runs += 1;
          throw new NotFoundError("No such commit.", "commit_not_found");
        },
      });
      const job = await waitForJob(queue, await queue.enqueue(kind));
      expect(job).toMatchObject({ state: "failed", attempts: 1, error: { code: "commit_not_found", message: "No such commit." } });
      expect(runs).toBe(1);
    });

    it("runs at most `concurrency` jobs at once in one instance, and loses none", async () => {
      const kind = kindOf("busy");
      const probe = concurrencyProbe();
      const queue = await open({ [kind]: (job) => probe.around(job.id, () => pause(100)) }, { ...NO_EXPIRY, concurrency: 2 });
      const ids = await Promise.all(Array.from({ length: 8 }, () => queue.enqueue(kind)));
      const jobs = await Promise.all(ids.map((id) => waitForJob(queue, id)));
      expect(jobs.map((job) => job.state)).toEqual(Array(8).fill("succeeded"));
      expect(probe.max.overall).toBeLessThanOrEqual(2);
    });

    it("runs at most `sandboxConcurrency` jobs of one sandbox at once, across instances", async () => {
      const kind = kindOf("build");
      const probe = concurrencyProbe();
      const handlers = { [kind]: (job: Parameters<JobHandler>[0]) => probe.around(job.input.sandboxKey!, () => pause(100)) };
      const [first] = [await open(handlers, NO_EXPIRY), await open(handlers, NO_EXPIRY)];
      const ids = await Promise.all(Array.from({ length: 6 }, (_, n) => first.enqueue(kind, { sandboxKey: `sandbox-${n % 2}` })));
      const jobs = await Promise.all(ids.map((id) => waitForJob(first, id)));
      expect(jobs.every((job) => job.state === "succeeded" && job.attempts === 1)).toBe(true);
      expect(probe.max.perKey).toBe(1);
    });

    it("runs at most `globalConcurrency` jobs at once across instances", async () => {
      const kind = kindOf("global");
      const probe = concurrencyProbe();
      const handlers = { [kind]: (job: Parameters<JobHandler>[0]) => probe.around(job.id, () => pause(100)) };
      const queues = [await open(handlers, { ...NO_EXPIRY, globalConcurrency: 2 }), await open(handlers, { ...NO_EXPIRY, globalConcurrency: 2 })];
      const ids = await Promise.all(Array.from({ length: 8 }, () => queues[0].enqueue(kind)));
      const jobs = await Promise.all(ids.map((id) => waitForJob(queues[1], id)));
      expect(jobs.map((job) => job.state)).toEqual(Array(8).fill("succeeded"));
      expect(probe.max.overall).toBeLessThanOrEqual(2);
    });

    it("keeps a long job of a live instance, however long it runs past the expiry", async () => {
      const kind = kindOf("long");
      const queue = await open({ [kind]: async () => {
        await pause(FAST_OPTIONS.expireSeconds * 1000 * 2);
        return "done once";
      } });
      const job = await waitForJob(queue, await queue.enqueue(kind));
      expect(job).toMatchObject({ state: "succeeded", attempts: 1, result: "done once" });
    });

    it("retries on another instance a job whose instance stopped renewing it, once it expires", async () => {
      const kind = kindOf("stuck");
      const stuck = gate();
      const started = gate();
      const a = await contract.open({ ...FAST_OPTIONS, handlers: { [kind]: async () => {
        started.open();
        await stuck.promise;
        return "too late";
      } } });
      const id = await a.enqueue(kind);
      await started.promise;
      // A stops without waiting for the job, as a dying instance does: nothing renews the job any more.
      await a.stop({ timeoutMs: 100 });
      const b = await open({ [kind]: async (job) => `finished on B, attempt ${job.attempt}` });
      const job = await waitForJob(b, id);
      stuck.open();
      expect(job).toMatchObject({ state: "succeeded", attempts: 2, result: "finished on B, attempt 2" });
    });

    it("stop() takes no more jobs and waits for the running ones (drain)", async () => {
      const kind = kindOf("drain");
      const release = gate();
      const started = gate();
      const a = await contract.open({ ...FAST_OPTIONS, handlers: { [kind]: async () => {
        started.open();
        await release.promise;
        return "drained";
      } } });
      const id = await a.enqueue(kind);
      await started.promise;
      const stopping = a.stop({ timeoutMs: 30_000 });
      release.open();
      await stopping;
      const witness = await open({ [kind]: async () => "not again" });
      expect(await witness.get(id)).toMatchObject({ state: "succeeded", result: "drained", attempts: 1 });
    });
  });
}
