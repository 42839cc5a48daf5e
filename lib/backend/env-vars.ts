import { callDeployment, type BackendRequestOptions } from "./client";
import { withRetries, type RetryOptions } from "./retries";
import type { DeploymentTarget, EnvVar } from "./types";

/** Deployment-level environment variables on the v1 deployment API, with `Authorization: Convex <admin key>`. */

/**
 * Sets variables on a deployment in one call (`POST <deploymentUrl>/api/v1/update_environment_variables`).
 * Existing variables with other names are left alone.
 */
export async function setEnvVariables(
  project: DeploymentTarget,
  values: Record<string, string>,
  options: BackendRequestOptions = {},
): Promise<void> {
  const changes: EnvVar[] = Object.entries(values).map(([name, value]) => ({ name, value }));
  if (changes.length === 0) return;
  await callDeployment(
    { operation: "set environment variables", target: project, secrets: changes.map((change) => change.value) },
    options,
    (client, init) => client.POST("/update_environment_variables", { ...init, body: { changes }, parseAs: "text" }),
  );
}

/** Every variable of a deployment by name (`GET <deploymentUrl>/api/v1/list_environment_variables`). */
export async function listEnvVariables(project: DeploymentTarget, options: BackendRequestOptions = {}): Promise<Record<string, string>> {
  const { environmentVariables } = await callDeployment({ operation: "list environment variables", target: project }, options, (client, init) =>
    client.GET("/list_environment_variables", init),
  );
  return environmentVariables;
}

/** Reads one variable; null when it is not set. */
export async function queryEnvVariable(project: DeploymentTarget, name: string, options: BackendRequestOptions = {}): Promise<string | null> {
  const environmentVariables = await listEnvVariables(project, options);
  return Object.hasOwn(environmentVariables, name) ? environmentVariables[name] : null;
}

/** {@link setEnvVariables} retried on transient failures (default 3 attempts, 500 ms apart). */
export function setEnvVariablesWithRetries(
  project: DeploymentTarget,
  values: Record<string, string>,
  options: BackendRequestOptions & RetryOptions = {},
): Promise<void> {
  return withRetries("set environment variables", () => setEnvVariables(project, values, options), options);
}

/** {@link queryEnvVariable} retried on transient failures (default 3 attempts, 500 ms apart). */
export function queryEnvVariableWithRetries(
  project: DeploymentTarget,
  name: string,
  options: BackendRequestOptions & RetryOptions = {},
): Promise<string | null> {
  return withRetries("query an environment variable", () => queryEnvVariable(project, name, options), options);
}
