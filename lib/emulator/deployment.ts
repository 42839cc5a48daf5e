import { z } from "zod";
import { parseAdminKey } from "@/lib/backend/admin-key";
import { QUERY_ENV_VAR_PATH } from "@/lib/backend/env-vars";
import type { EmulatorContext } from "./context";
import { EmulatorError, authorizationCredential, readJson } from "./http";
import { applyEnvChanges, findDeployKeyDeployment, findDeployment, getEnvVar, type EmulatorDeployment } from "./store";

/** Deployment endpoints under `/deployments/<name>`: environment variables, as the hosted deployment API. */

/** Upstream limits (`crates/common/src/types/environment_variables.rs`). */
const ENV_NAME = /^[a-zA-Z_]+[a-zA-Z0-9_]*$/;
const MAX_NAME_LENGTH = 256;
const MAX_VALUE_BYTES = 8 * 1024;


const updateBody = z.strictObject({
  changes: z.array(z.strictObject({ name: z.string(), value: z.string().nullable() })),
});

const queryBody = z.object({
  path: z.string(),
  format: z.string().optional(),
  args: z.array(z.unknown()),
});

const queryArgs = z.object({ name: z.string() });

/**
 * The deployment, when the request carries `Authorization: Convex <key>` with a key issued for
 * exactly this deployment. Team tokens and keys of other deployments are refused.
 */
async function requireDeploymentKey(request: Request, context: EmulatorContext, name: string): Promise<EmulatorDeployment> {
  const deployment = await findDeployment(context.db, { name });
  if (!deployment) throw new EmulatorError(404, "DeploymentNotFound", `The requested deployment ${name} does not exist.`);
  const key = authorizationCredential(request, "Convex");
  if (!key) throw new EmulatorError(401, "BadAdminKey", "An admin key is required: send Authorization: Convex <admin key>.");
  const parts = parseAdminKey(key);
  const issuedFor = parts ? await findDeployKeyDeployment(context.db, parts.token) : null;
  if (!parts || issuedFor !== name || parts.teamSlug !== deployment.teamSlug || parts.projectSlug !== deployment.projectSlug) {
    throw new EmulatorError(
      403,
      "BadDeployKey",
      `The provided deploy key was invalid for deployment '${name}'. Double check that the environment this key was generated for matches the desired deployment.`,
    );
  }
  return deployment;
}

function validateChange(change: { name: string; value: string | null }): void {
  if (change.name.length > MAX_NAME_LENGTH) {
    throw new EmulatorError(400, "EnvironmentVariableNameTooLong", `Environment variable names may have at most ${MAX_NAME_LENGTH} characters.`);
  }
  if (!ENV_NAME.test(change.name)) {
    throw new EmulatorError(400, "EnvironmentVariableNameInvalid", `Environment variable name '${change.name}' is invalid: use letters, digits and '_', not starting with a digit.`);
  }
  if (change.value !== null && Buffer.byteLength(change.value, "utf8") > MAX_VALUE_BYTES) {
    throw new EmulatorError(400, "EnvironmentVariableValueTooLarge", `Environment variable ${change.name} is larger than ${MAX_VALUE_BYTES} bytes.`);
  }
}

export async function updateEnvironmentVariables(request: Request, context: EmulatorContext, name: string): Promise<Response> {
  const deployment = await requireDeploymentKey(request, context, name);
  const { changes } = await readJson(request, updateBody);
  changes.forEach(validateChange);
  await context.db.transaction((tx) => applyEnvChanges(tx, deployment.name, changes));
  return new Response(null, { status: 200 });
}

/** `/api/query`: only the system function reading one environment variable exists here. */
export async function runQuery(request: Request, context: EmulatorContext, name: string): Promise<Response> {
  const deployment = await requireDeploymentKey(request, context, name);
  const body = await readJson(request, queryBody);
  if (body.path !== QUERY_ENV_VAR_PATH) {
    throw new EmulatorError(404, "FunctionNotFound", `Could not find public function for '${body.path.slice(0, 200)}'.`);
  }
  const args = queryArgs.safeParse(body.args[0]);
  if (!args.success) {
    return Response.json({ status: "error", errorMessage: "ArgumentValidationError: expected args [{ name: string }]." }, { status: 400 });
  }
  const value = await getEnvVar(context.db, deployment.name, args.data.name);
  return Response.json({ status: "success", value: value === null ? null : { name: args.data.name, value } });
}
