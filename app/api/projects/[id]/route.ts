import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { toProjectResponse } from "@/lib/projects";

export const dynamic = "force-dynamic";

export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(toProjectResponse(project));
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
