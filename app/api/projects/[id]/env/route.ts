import { setEnvVariablesBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { listDeploymentEnv, setDeploymentEnv } from "@/lib/cloud/deployment-env";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/** The connected deployment's variables, `{ variables: [{ name, valueLength }] }`; owner only, 409 when not connected. */
export const GET = route<Context>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json({ variables: await listDeploymentEnv(project) });
});

/** `{ values: { NAME: value } }` sets those variables (others stay) → the masked list. */
export const PUT = route<Context>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const { values } = await parseJsonBody(request, setEnvVariablesBody);
  return Response.json({ variables: await setDeploymentEnv(project, values) });
});

export const { POST, PATCH, DELETE } = methodNotAllowed(["GET", "PUT"]);
