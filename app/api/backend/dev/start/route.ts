import { z } from "zod";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { getBackendCredentials } from "@/lib/cloud/credentials";
import { startBackendDevServer } from "@/lib/cloud/backend-dev-server";
import { connectProjectSandbox } from "@/lib/cloud/enable";
import { writeBackendUrl } from "@/lib/cloud/restore";
import { ConflictError } from "@/lib/errors";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";

export const dynamic = "force-dynamic";

const body = z.object({ projectId: z.string().min(1) });

/** Starts (or restarts, attached to the error scanner) the project's backend dev server. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = await parseJsonBody(request, body);
  const project = await requireOwnedProject(user, projectId);
  const credentials = await getBackendCredentials(project.id);
  if (!credentials) throw new ConflictError("The project has no connected backend.", "backend_not_connected");
  const sandbox = await connectProjectSandbox(project);
  await writeBackendUrl(sandbox, credentials);
  const success = await startBackendDevServer(sandbox, project.id, {
    adminKey: credentials.adminKey,
    deploymentUrl: credentials.deploymentUrl,
  });
  return Response.json({ success });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
