import { z } from "zod";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { isBackendDevServerRunning } from "@/lib/cloud/backend-dev-server";
import { connectProjectSandbox } from "@/lib/cloud/enable";
import { missingSandboxWiring } from "@/lib/cloud/sandbox-setup";
import { methodNotAllowed, parseQuery, route } from "@/lib/http";

export const dynamic = "force-dynamic";

const query = z.object({ projectId: z.string().min(1) });

/**
 * `{ backendProject, devServer, missingSandboxWiring }`: the spec 2.1 state, whether the backend
 * dev server runs, and which pieces of the app's wiring a connected project lacks (connected by
 * managed connect, which skips the sandbox; enable finishes them).
 */
export const GET = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = parseQuery(request, query);
  const project = await requireOwnedProject(user, projectId);
  const state = project.backendProject;
  const sandbox = project.sandboxId ? await connectProjectSandbox(project) : null;
  const running = sandbox ? await isBackendDevServerRunning(sandbox) : false;
  const missing = sandbox && state?.kind === "connected" ? await missingSandboxWiring(sandbox, state.deploymentUrl) : [];
  return Response.json({ backendProject: state, devServer: running ? "running" : "stopped", missingSandboxWiring: missing });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
