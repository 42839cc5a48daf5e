import { expect } from "vitest";
import { GET as jobRoute } from "@/app/api/projects/[id]/jobs/[jobId]/route";
import type { ApiJob } from "@/lib/api-contract/types";

/** Reads the project's job through the status route until it succeeded or failed (the test's timeout bounds the wait). */
export async function pollJob(projectId: string, jobId: string, headers: Record<string, string>): Promise<ApiJob> {
  for (;;) {
    const answer = await jobRoute(new Request(`http://localhost/api/projects/${projectId}/jobs/${jobId}`, { headers }), {
      params: Promise.resolve({ id: projectId, jobId }),
    });
    expect(answer.status).toBe(200);
    const job = (await answer.json()) as ApiJob;
    if (job.state === "succeeded" || job.state === "failed") return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Follows a 202 from a route that queues a job: checks its Location, then polls the job there until it is done. */
export async function awaitQueuedJob(response: Response, headers: Record<string, string>): Promise<ApiJob> {
  expect(response.status).toBe(202);
  const queued = (await response.json()) as ApiJob;
  expect(response.headers.get("location")).toBe(`/api/projects/${queued.projectId}/jobs/${queued.id}`);
  return pollJob(queued.projectId!, queued.id, headers);
}
