import { createProjectBody } from "@/lib/api-contract/schemas";
import { requireUser } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { createUserProject, listUserProjects, toProjectResponse } from "@/lib/projects";

export const dynamic = "force-dynamic";

export const GET = route(async (request) => {
  const user = await requireUser(request);
  const projects = await listUserProjects(user.id);
  return Response.json({ projects: projects.map(toProjectResponse) });
});

export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { name } = await parseJsonBody(request, createProjectBody);
  const project = await createUserProject(user.id, name);
  return Response.json(toProjectResponse(project), { status: 201 });
});

export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);
