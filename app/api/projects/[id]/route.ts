import { renameProjectBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { renameOwnedProject, toProjectResponse } from "@/lib/projects";
import { deleteProjectEverywhere } from "@/lib/workspace/delete-project";

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

/** Deletes the project with its sandbox, blobs and managed backend project; owner only. */
export const DELETE = route<Context>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  await deleteProjectEverywhere(project);
  return Response.json({ success: true });
});

export const { POST, PUT } = methodNotAllowed(["GET", "PATCH", "DELETE"]);
