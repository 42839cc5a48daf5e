import { requireProjectOwner } from "@/lib/auth";
import { NotFoundError } from "@/lib/errors";
import { methodNotAllowed, route } from "@/lib/http";
import { getProjectJob } from "@/lib/jobs";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * GET /api/projects/<id>/jobs/<jobId> (owner only): a background job of the project (bundle
 * build, screenshots): queued, running, then succeeded with its result or failed with its error.
 */
export const GET = route<{ params: Promise<{ id: string; jobId: string }> }>(async (request, { params }) => {
  const { id, jobId } = await params;
  const { project } = await requireProjectOwner(request, id);
  const job = await getProjectJob(project.id, jobId);
  if (!job) throw new NotFoundError("No such job in this project.", "job_not_found");
  return Response.json(job);
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
