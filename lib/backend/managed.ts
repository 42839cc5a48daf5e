import { callManagement, type ManagementApiOptions } from "./client";
import { isErrorOf } from "@/lib/errors";
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

/** Creates a backend project on the platform team (`GET /v1/token_details` for the team id, then `POST /v1/teams/{id}/create_project`). */
export function createManagedProject(
  input: ManagedProjectInput & { deploymentType?: DeploymentType },
  options?: ManagementApiOptions,
): Promise<CreateProjectResponse> {
  const { teamScopedToken, ...rest } = input;
  return createProjectWithToken({ bearerToken: teamScopedToken, ...rest }, options);
}

/** The project's deployment of this type (created when missing) and a fresh deploy key scoped to it. */
export function provisionManagedDeployment(
  input: { teamScopedToken: string; teamSlug: string; projectSlug: string; deploymentType?: DeploymentType },
  options?: ManagementApiOptions,
): Promise<DeploymentProvisionResponse> {
  const { teamScopedToken, ...rest } = input;
  return provisionDeploymentWithToken({ bearerToken: teamScopedToken, ...rest }, options);
}

/**
 * Full managed workflow → BackendProject (plus the numeric `projectId` needed for deletion):
 * adopts the project when one with this (slug-shaped) name exists, else creates it; ensures its
 * dev deployment; creates a deploy key. The returned `token` is that key, never the team token.
 */
export function provisionManagedProject(input: ManagedProjectInput, options?: ProvisionWorkflowOptions): Promise<ProvisionedBackendProject> {
  const { teamScopedToken, ...rest } = input;
  return provisionProjectWithToken({ bearerToken: teamScopedToken, owner: "platform", ...rest }, options);
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
    await callManagement({ operation: "delete project", bearerToken: input.teamScopedToken }, options, (client, init) =>
      client.POST("/projects/{project_id}/delete", { ...init, params: { path: { project_id: input.projectId } }, parseAs: "text" }),
    );
    return true;
  } catch (error) {
    if (isErrorOf(error, BackendNotFoundError) && error.upstreamCode === "ProjectNotFound") return false;
    throw error;
  }
}
