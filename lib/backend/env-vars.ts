import { z } from "zod";
import { secretVariants } from "./admin-key";
import { callBackend, joinUrl, parseWire, type BackendRequestOptions } from "./client";
import { BackendApiError, scrubUpstreamText } from "./errors";
import { withRetries, type RetryOptions } from "./retries";
import type { DeploymentTarget, EnvVar } from "./types";

/** Deployment-level environment variables, authenticated with `Authorization: Convex <admin key>`. */

/** The system function the backend CLI reads one variable with. */
export const QUERY_ENV_VAR_PATH = "_system/cli/queryEnvironmentVariables:get";

const queryWire = z.discriminatedUnion("status", [
  z.object({ status: z.literal("success"), value: z.object({ name: z.string(), value: z.string() }).nullable() }),
  z.object({ status: z.literal("error"), errorMessage: z.string().optional() }),
]);

/**
 * Sets variables on a deployment in one call (`POST <deploymentUrl>/api/update_environment_variables`).
 * Existing variables with other names are left alone.
 */
export async function setEnvVariables(
  project: DeploymentTarget,
  values: Record<string, string>,
  options?: BackendRequestOptions,
): Promise<void> {
  const changes: EnvVar[] = Object.entries(values).map(([name, value]) => ({ name, value }));
  if (changes.length === 0) return;
  await callBackend(
    {
      operation: "set environment variables",
      method: "POST",
      url: joinUrl(project.deploymentUrl, "/api/update_environment_variables"),
      authorization: `Convex ${project.token}`,
      json: { changes },
      secrets: [...secretVariants(project.token), ...changes.map((change) => change.value)],
    },
    options,
  );
}

/** Reads one variable (`POST <deploymentUrl>/api/query`); null when it is not set. */
export async function queryEnvVariable(project: DeploymentTarget, name: string, options?: BackendRequestOptions): Promise<string | null> {
  const operation = "query an environment variable";
  const secrets = secretVariants(project.token);
  const body = await callBackend(
    {
      operation,
      method: "POST",
      url: joinUrl(project.deploymentUrl, "/api/query"),
      authorization: `Convex ${project.token}`,
      json: { path: QUERY_ENV_VAR_PATH, format: "convex_encoded_json", args: [{ name }] },
      secrets,
    },
    options,
  );
  const result = parseWire(queryWire, body, operation);
  if (result.status === "error") {
    const detail = scrubUpstreamText(result.errorMessage ?? "", secrets);
    throw new BackendApiError(
      `Failed to ${operation}: the deployment reported an error${detail ? `: ${detail}` : "."}`,
      { operation },
      502,
      "backend_query_failed",
    );
  }
  return result.value?.value ?? null;
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
