import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { readRepositoryStatus } from "@/lib/repository-mirror";

export const dynamic = "force-dynamic";

/** GET /api/projects/<id>/repository (owner only): when the app repository was last mirrored, the last failure, what a rebuild restored. */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(await readRepositoryStatus(project.id));
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
