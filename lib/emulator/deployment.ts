import { z } from "zod";
import { runCliDataQuery } from "./cli-data";
import type { EmulatorContext } from "./context";
import { EmulatorError, authorizationCredential, readJson } from "./http";
import { applyEnvChanges, findDeployKeyDeployment, findTeamByToken, getEnvVar, listEnvVars, setDeploymentPaused, type EmulatorDeployment } from "./store";

/**
 * The deployment API of one emulated deployment, served at the root of its own listener:
 * `/api/v1/...` (deployment-api.json) plus what the `convex` CLI calls
 * (`/api/update_environment_variables`, and the system queries of `env get` / `env list`, run
 * through the function API of ./functions-api). Pushes are in ./push.
 */

/** Upstream limits (`crates/common/src/types/environment_variables.rs`, docs "Environment Variables"). */
const ENV_NAME = /^[a-zA-Z_]+[a-zA-Z0-9_]*$/;
const MAX_NAME_LENGTH = 256;
const MAX_VALUE_BYTES = 8 * 1024;
export const MAX_ENV_VARS = 512;
/** Names and values of all of a deployment's variables together. */
export const MAX_ENV_TOTAL_BYTES = 512 * 1024;

/** `UpdateEnvVarRequest`: an absent or null value deletes the variable. */
const updateBody = z.strictObject({
  changes: z.array(z.strictObject({ name: z.string(), value: z.string().nullish() })),
});

/** Key shapes of deployment keys: `dev:<name>|…`, `prod:<name>|…` or a bare `<name>|…` admin key. */
const DEPLOYMENT_KEY = /^(?:(?:dev|prod):)?([a-z0-9-]+)\|([^|]+)$/;
/** The deployment a deployment-scoped key names (`dev:<name>|…`), or null. */
export const deploymentNameOfKey = (key: string): string | null => DEPLOYMENT_KEY.exec(key)?.[1] ?? null;

/** Project keys, `project:<team>:<project>|<access token>` (research §2.2). */
const PROJECT_KEY = /^project:([^:|]+):([^:|]+)\|([^|]+)$/;

/** The system functions the CLI reads variables with (`convex env get` / `env list`). */
export const ENV_GET_FUNCTION = "_system/cli/queryEnvironmentVariables:get";
const ENV_LIST_FUNCTIONS = ["_system/cli/queryEnvironmentVariables", "_system/cli/queryEnvironmentVariables:default"];

/** True when a team token or OAuth team token belongs to the deployment's team. */
async function isTeamToken(context: EmulatorContext, token: string, deployment: EmulatorDeployment): Promise<boolean> {
  return (await findTeamByToken(context.db, token))?.id === deployment.teamId;
}

/**
 * Whether `key` opens this deployment, as the hosted deployment accepts keys: a deploy key issued
 * for it (`dev:<name>|…`), `project:<team>:<project>|<token>` where the token is the team's access
 * token (or an older key issued for the deployment), or the team's access token itself.
 */
export async function keyOpensDeployment(context: EmulatorContext, key: string, deployment: EmulatorDeployment): Promise<boolean> {
  const project = PROJECT_KEY.exec(key);
  if (project) {
    const [, teamSlug, projectSlug, token] = project;
    if (teamSlug !== deployment.teamSlug || projectSlug !== deployment.projectSlug) return false;
    return (await isTeamToken(context, token, deployment)) || (await findDeployKeyDeployment(context.db, token)) === deployment.name;
  }
  const scoped = DEPLOYMENT_KEY.exec(key);
  if (scoped) return scoped[1] === deployment.name && (await findDeployKeyDeployment(context.db, scoped[2])) === deployment.name;
  return !key.includes("|") && isTeamToken(context, key, deployment);
}

/** The error a refused key gets, in the hosted shape. Never echoes the key. */
export function badDeployKey(deployment: EmulatorDeployment): EmulatorError {
  return new EmulatorError(
    401,
    "BadDeployKey",
    `The provided deploy key was invalid for deployment '${deployment.name}'. Double check that the environment this key was generated for matches the desired deployment.`,
  );
}

export async function requireKey(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<void> {
  const key = authorizationCredential(request, "Convex");
  if (!key) throw new EmulatorError(401, "BadAdminKey", "An admin key is required: send Authorization: Convex <admin key>.");
  if (!(await keyOpensDeployment(context, key, deployment))) throw badDeployKey(deployment);
}

const tooManyEnvVars = () => new EmulatorError(400, "TooManyEnvironmentVariables", `A deployment may have at most ${MAX_ENV_VARS} environment variables.`);

function validateChange(change: { name: string; value?: string | null }): void {
  if (change.name.length > MAX_NAME_LENGTH) {
    throw new EmulatorError(400, "EnvironmentVariableNameTooLong", `Environment variable names may have at most ${MAX_NAME_LENGTH} characters.`);
  }
  if (!ENV_NAME.test(change.name)) {
    throw new EmulatorError(400, "EnvironmentVariableNameInvalid", `Environment variable name '${change.name}' is invalid: use letters, digits and '_', not starting with a digit.`);
  }
  if (typeof change.value === "string" && Buffer.byteLength(change.value, "utf8") > MAX_VALUE_BYTES) {
    throw new EmulatorError(400, "EnvironmentVariableValueTooLarge", `Environment variable ${change.name} is larger than ${MAX_VALUE_BYTES} bytes.`);
  }
}

/** Convex's answer to a function call on a paused deployment (`model::backend_state::PAUSED_ERROR_MESSAGE`). */
export const PAUSED_ERROR_MESSAGE =
  "Cannot run functions while this deployment is paused. Resume the deployment in the dashboard settings to allow functions to run.";

/** `POST /api/v1/pause_deployment`: new function calls are refused until unpause. */
export async function pauseDeployment(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  await setDeploymentPaused(context.db, deployment.name, true);
  return new Response(null, { status: 200 });
}

/** `POST /api/v1/unpause_deployment`. */
export async function unpauseDeployment(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  await setDeploymentPaused(context.db, deployment.name, false);
  return new Response(null, { status: 200 });
}

/** `POST /api/v1/update_environment_variables` (and the CLI's `/api/update_environment_variables`). */
export async function updateEnvironmentVariables(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const { changes } = await readJson(request, updateBody);
  changes.forEach(validateChange);
  if (new Set(changes.filter((change) => typeof change.value === "string").map((change) => change.name)).size > MAX_ENV_VARS) throw tooManyEnvVars();
  await context.db.transaction(async (tx) => {
    await applyEnvChanges(tx, deployment.name, changes);
    // Checked on the result, inside the transaction: a refused change leaves the variables as they were.
    const variables = await listEnvVars(tx, deployment.name);
    if (variables.length > MAX_ENV_VARS) throw tooManyEnvVars();
    const totalBytes = variables.reduce((sum, variable) => sum + Buffer.byteLength(variable.name) + Buffer.byteLength(variable.value), 0);
    if (totalBytes > MAX_ENV_TOTAL_BYTES) {
      throw new EmulatorError(400, "EnvironmentVariablesTooLarge", `A deployment's environment variables may total at most ${MAX_ENV_TOTAL_BYTES} bytes (names and values).`);
    }
  });
  return new Response(null, { status: 200 });
}

/** `GET /api/v1/list_environment_variables`. */
export async function listEnvironmentVariables(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const variables = await listEnvVars(context.db, deployment.name);
  return Response.json({ environmentVariables: Object.fromEntries(variables.map((variable) => [variable.name, variable.value])) });
}

/** `GET /api/v1/get_canonical_urls`: the listener's URL is both the cloud and the site URL. */
export async function getCanonicalUrls(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const url = new URL(request.url).origin;
  return Response.json({ convexCloudUrl: url, convexSiteUrl: url });
}

/** `GET /api/v1/deployment_info`. */
export async function deploymentInfo(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  return Response.json({
    kind: "cloud",
    id: deployment.id,
    teamId: deployment.teamId,
    projectId: deployment.projectId,
    projectName: deployment.projectName,
    projectSlug: deployment.projectSlug,
    deploymentType: deployment.deploymentType,
    reference: deployment.name,
  });
}

/** Result of one system function call: its value, or the error message a failed call reports. */
type FunctionResult = { ok: true; value: unknown } | { ok: false; errorMessage: string };

/** Runs one of the system functions the emulator knows (the CLI's data plane, reading environment variables). */
export async function runSystemFunction(context: EmulatorContext, deployment: EmulatorDeployment, path: string, args: unknown[]): Promise<FunctionResult> {
  const data = await runCliDataQuery(context, deployment, path, args[0]);
  if (data) return data;
  if (ENV_LIST_FUNCTIONS.includes(path)) return { ok: true, value: await listEnvVars(context.db, deployment.name) };
  if (path !== ENV_GET_FUNCTION) return { ok: false, errorMessage: `Could not find public function for '${path.slice(0, 200)}'. Did you forget to run \`npx convex dev\`?` };
  const parsed = z.object({ name: z.string() }).safeParse(args[0]);
  if (!parsed.success) return { ok: false, errorMessage: "ArgumentValidationError: Object is missing the required field `name`." };
  const value = await getEnvVar(context.db, deployment.name, parsed.data.name);
  return { ok: true, value: value === null ? null : { name: parsed.data.name, value } };
}
