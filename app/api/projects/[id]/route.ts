import { renameProjectBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { renameOwnedProject, toProjectResponse } from "@/lib/projects";
import { enqueueProjectJob, JOB_KINDS, projectJobPath } from "@/lib/jobs";
import { deleteProjectOrRetryLater } from "@/lib/workspace/delete-project";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

export const GET = route<Context>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(toProjectResponse(project));
});

/** `{ name }` → the renamed project; owner only. */
export const PATCH = route<Context>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const { name } = await parseJsonBody(request, renameProjectBody);
  return Response.json(toProjectResponse(await renameOwnedProject(project, name)));
});

/**
 * Deletes the project with its sandbox, blobs and managed backend project; owner only. When a
 * fault stops it part-way: 202 with the job that finishes it (its Location answers 404 once the
 * project is gone).
 */
export const DELETE = route<Context>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const outcome = await deleteProjectOrRetryLater(project, () => enqueueProjectJob(JOB_KINDS.projectDelete, project.id));
  if (outcome.deleted) return Response.json({ success: true });
  return Response.json(outcome.retry, { status: 202, headers: { location: projectJobPath(project.id, outcome.retry.id) } });
});

export const { POST, PUT } = methodNotAllowed(["GET", "PATCH", "DELETE"]);
