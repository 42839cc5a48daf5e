import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { enqueueProjectJob, JOB_KINDS, projectJobPath } from "@/lib/jobs";
import { getBrowserPool } from "@/lib/screenshots";

export const dynamic = "force-dynamic";

/**
 * Queues screenshots of the project's preview (mobile + desktop): 202 with the job and its
 * Location; once succeeded its result is `{ mobileUrl, desktopUrl }`.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  // Without a browser, answer 503 at once rather than queue a job that cannot run.
  await getBrowserPool().get();
  const job = await enqueueProjectJob(JOB_KINDS.screenshots, project.id);
  return Response.json(job, { status: 202, headers: { location: projectJobPath(project.id, job.id) } });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
