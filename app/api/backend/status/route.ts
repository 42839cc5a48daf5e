import { z } from "zod";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { isBackendDevServerRunning } from "@/lib/cloud/backend-dev-server";
import { connectProjectSandbox } from "@/lib/cloud/enable";
import { methodNotAllowed, parseQuery, route } from "@/lib/http";

export const dynamic = "force-dynamic";

const query = z.object({ projectId: z.string().min(1) });

/** `{ backendProject, devServer }`: the spec 2.1 state and whether the backend dev server runs. */
export const GET = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = parseQuery(request, query);
  const project = await requireOwnedProject(user, projectId);
  const running = project.sandboxId ? await isBackendDevServerRunning(await connectProjectSandbox(project)) : false;
  return Response.json({ backendProject: project.backendProject, devServer: running ? "running" : "stopped" });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
