import { createProjectBody } from "@/lib/api-contract/schemas";
import { requireUser } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { createProject, toProjectResponse } from "@/lib/projects";
import { getStore } from "@/lib/store";
import { listProjects } from "@/lib/store/projects";

export const dynamic = "force-dynamic";

export const GET = route(async (request) => {
  const user = await requireUser(request);
  const projects = await listProjects(await getStore(), user.id);
  return Response.json({ projects: projects.map(toProjectResponse) });
});

export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { name } = await parseJsonBody(request, createProjectBody);
  const project = await createProject(await getStore(), user.id, name);
  return Response.json(toProjectResponse(project), { status: 201 });
});

export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);
