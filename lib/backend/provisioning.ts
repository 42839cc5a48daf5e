import { z } from "zod";
import { toStoredAdminKey } from "./admin-key";
import { callManagementApi, parseWire, type ManagementApiOptions } from "./client";
import type { CreateProjectResponse, DeploymentProvisionResponse, DeploymentType, ProvisionedBackendProject } from "./types";

/**
 * Project creation and deployment provisioning shared by both modes: managed (platform
 * team-scoped token) and OAuth (the user's access token). Only the bearer token differs.
 */

/** Absent or null in current answers; both read as undefined. */
const optionalText = z
  .string()
  .min(1)
  .nullish()
  .transform((value) => value ?? undefined);

const createProjectWire = z.object({
  projectSlug: z.string().min(1),
  projectId: z.number().int(),
  teamSlug: z.string().min(1),
  deploymentName: optionalText,
  prodUrl: optionalText,
  adminKey: optionalText,
  projectsRemaining: z.number().int().nonnegative(),
});

const provisionWire = z.object({
  deploymentName: z.string().min(1),
  url: z.url(),
  adminKey: z.string().min(1),
  deploymentType: z
    .enum(["dev", "prod"])
    .nullish()
    .transform((value) => value ?? undefined),
});

/** At or below this many remaining projects, provisioning returns a warning for the user. */
const LOW_QUOTA_WARNING_AT = 2;

export interface CreateProjectInput {
  /** Bearer token: the team-scoped token (managed) or the OAuth access token. Secret. */
  bearerToken: string;
  teamSlug: string;
  projectName: string;
  /** @default "dev" */
  deploymentType?: DeploymentType;
}

/** `POST <provisionHost>/api/create_project`. */
export async function createProjectWithToken(input: CreateProjectInput, options: ManagementApiOptions = {}): Promise<CreateProjectResponse> {
  const operation = "create project";
  const body = await callManagementApi(
    {
      operation,
      method: "POST",
      path: "/api/create_project",
      bearerToken: input.bearerToken,
      json: { team: input.teamSlug, projectName: input.projectName, deploymentType: input.deploymentType ?? "dev" },
    },
    options,
  );
  // The schema drops fields we do not use (teamId, deploymentsRemaining, …).
  return parseWire(createProjectWire, body, operation);
}

export interface ProvisionDeploymentInput {
  /** Bearer token: the team-scoped token (managed) or the OAuth access token. Secret. */
  bearerToken: string;
  teamSlug: string;
  projectSlug: string;
  /** @default "dev" */
  deploymentType?: DeploymentType;
}

/** `POST <provisionHost>/api/deployment/provision_and_authorize` → one deployment and a key scoped to it. */
export async function provisionDeploymentWithToken(
  input: ProvisionDeploymentInput,
  options: ManagementApiOptions = {},
): Promise<DeploymentProvisionResponse> {
  const operation = "provision the deployment";
  const body = await callManagementApi(
    {
      operation,
      method: "POST",
      path: "/api/deployment/provision_and_authorize",
      bearerToken: input.bearerToken,
      json: { teamSlug: input.teamSlug, projectSlug: input.projectSlug, deploymentType: input.deploymentType ?? "dev" },
    },
    options,
  );
  return parseWire(provisionWire, body, operation);
}

/** Options of the full provisioning workflows. */
export interface ProvisionWorkflowOptions extends ManagementApiOptions {
  /**
   * Called once the backend project exists and before its deployment is provisioned, so the
   * caller can record the project id: a failure later then never leaves an unknown project behind.
   */
  onProjectCreated?: (project: CreateProjectResponse) => void | Promise<void>;
  /**
   * A project an earlier, interrupted run already created (as reported to `onProjectCreated`):
   * the workflow then only provisions its deployment and never creates a second project.
   */
  resumeFrom?: CreateProjectResponse;
}

/**
 * Full workflow: create the project with a dev deployment, then provision/authorize that
 * deployment for a deployment-scoped admin key. Nothing depends on `create_project`'s `adminKey`.
 */
export async function provisionProjectWithToken(
  input: Omit<CreateProjectInput, "deploymentType">,
  options: ProvisionWorkflowOptions = {},
): Promise<ProvisionedBackendProject> {
  let created = options.resumeFrom;
  if (!created) {
    created = await createProjectWithToken({ ...input, deploymentType: "dev" }, options);
    await options.onProjectCreated?.(created);
  }
  const deployment = await provisionDeploymentWithToken(
    { bearerToken: input.bearerToken, teamSlug: created.teamSlug, projectSlug: created.projectSlug, deploymentType: "dev" },
    options,
  );
  const token = toStoredAdminKey(deployment.adminKey, {
    teamSlug: created.teamSlug,
    projectSlug: created.projectSlug,
    deploymentName: deployment.deploymentName,
    bearerToken: input.bearerToken,
  });
  const remaining = created.projectsRemaining;
  return {
    token,
    deploymentName: deployment.deploymentName,
    deploymentUrl: deployment.url,
    projectSlug: created.projectSlug,
    teamSlug: created.teamSlug,
    projectId: created.projectId,
    projectsRemaining: remaining,
    ...(remaining <= LOW_QUOTA_WARNING_AT && {
      warningMessage: `You have ${remaining} project${remaining === 1 ? "" : "s"} remaining on this team.`,
    }),
  };
}
