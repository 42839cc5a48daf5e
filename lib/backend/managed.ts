import { callManagementApi, type ManagementApiOptions } from "./client";
import { BackendNotFoundError } from "./errors";
import {
  createProjectWithToken,
  provisionDeploymentWithToken,
  provisionProjectWithToken,
  type ProvisionWorkflowOptions,
} from "./provisioning";
import type { CreateProjectResponse, DeploymentProvisionResponse, DeploymentType, ProvisionedBackendProject } from "./types";

/** Managed mode (spec 4.5): the platform's team-scoped token creates projects on its own team. */

export interface ManagedProjectInput {
  /** Team-scoped token with project-creation permission (secret). */
  teamScopedToken: string;
  teamSlug: string;
  projectName: string;
}

/** Creates a backend project on the platform team (`POST /api/create_project`). */
export function createManagedProject(
  input: ManagedProjectInput & { deploymentType?: DeploymentType },
  options?: ManagementApiOptions,
): Promise<CreateProjectResponse> {
  const { teamScopedToken, ...rest } = input;
  return createProjectWithToken({ bearerToken: teamScopedToken, ...rest }, options);
}

/** Provisions (or returns) a deployment of a project and a key scoped to it. */
export function provisionManagedDeployment(
  input: { teamScopedToken: string; teamSlug: string; projectSlug: string; deploymentType?: DeploymentType },
  options?: ManagementApiOptions,
): Promise<DeploymentProvisionResponse> {
  const { teamScopedToken, ...rest } = input;
  return provisionDeploymentWithToken({ bearerToken: teamScopedToken, ...rest }, options);
}

/**
 * Full managed workflow → BackendProject (plus the numeric `projectId` needed for deletion). The
 * returned `token` is the deployment-scoped key, never derived from the team token.
 */
export function provisionManagedProject(input: ManagedProjectInput, options?: ProvisionWorkflowOptions): Promise<ProvisionedBackendProject> {
  const { teamScopedToken, ...rest } = input;
  return provisionProjectWithToken({ bearerToken: teamScopedToken, ...rest }, options);
}

/**
 * Deletes a backend project and all its deployments (`POST /v1/projects/{id}/delete`). Returns
 * false when the backend says the project does not exist (already deleted), true otherwise.
 */
export async function deleteManagedProject(
  input: { teamScopedToken: string; projectId: number },
  options: ManagementApiOptions = {},
): Promise<boolean> {
  if (!Number.isSafeInteger(input.projectId) || input.projectId <= 0) {
    throw new TypeError("projectId must be a positive integer.");
  }
  try {
    await callManagementApi(
      { operation: "delete project", method: "POST", path: `/v1/projects/${input.projectId}/delete`, bearerToken: input.teamScopedToken },
      options,
    );
    return true;
  } catch (error) {
    if (error instanceof BackendNotFoundError && error.upstreamCode === "ProjectNotFound") return false;
    throw error;
  }
}
