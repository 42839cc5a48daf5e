import { toStoredAdminKey } from "./admin-key";
import { callManagement, type ManagementApiOptions } from "./client";
import { isErrorOf } from "@/lib/errors";
import { BackendApiError, BackendNotFoundError } from "./errors";
import { withRetries, type RetryOptions } from "./retries";
import type { CreateProjectResponse, DeploymentProvisionResponse, DeploymentType, ProvisionedBackendProject } from "./types";

/**
 * Project creation and deployment provisioning on the documented v1 Platform API, shared by both
 * modes: managed (platform team token) and OAuth (the user's access token). Only the bearer differs.
 */

/** Name of the deploy key provisioning creates on a deployment (shown in the backend's dashboard). */
const DEPLOY_KEY_NAME = "cloud-backend-service";
/** Names that are their own slug; only such names are looked up before creating. */
const SLUG_SHAPED = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface TokenInput {
  /** Bearer token: the team-scoped token (managed) or the OAuth access token. Secret. */
  bearerToken: string;
}

/** `GET /v1/token_details` → the id of the token's team (project-scoped tokens are refused). */
export async function getTokenTeamId(input: TokenInput, options: ManagementApiOptions = {}): Promise<number> {
  const operation = "read the token details";
  const details = await callManagement({ operation, bearerToken: input.bearerToken }, options, (client, init) => client.GET("/token_details", init));
  if (details.type !== "teamToken") {
    throw new BackendApiError(`Failed to ${operation}: the token grants access to one project, not a team.`, { operation }, 502, "backend_token_not_team_scoped");
  }
  return details.teamId;
}

/** A project as `GET /v1/teams/{team}/projects/{slug}` describes it. */
export interface BackendProjectSummary {
  projectId: number;
  projectSlug: string;
  projectName: string;
  teamSlug: string;
}

/** `GET /v1/teams/{team_id_or_slug}/projects/{project_slug}`; null when the team has no such project. */
export async function findBackendProjectBySlug(
  input: TokenInput & { team: number | string; projectSlug: string },
  options: ManagementApiOptions = {},
): Promise<BackendProjectSummary | null> {
  try {
    const project = await callManagement({ operation: "look up the project", bearerToken: input.bearerToken }, options, (client, init) =>
      client.GET("/teams/{team_id_or_slug}/projects/{project_slug}", {
        ...init,
        params: { path: { team_id_or_slug: String(input.team), project_slug: input.projectSlug } },
      }),
    );
    return { projectId: project.id, projectSlug: project.slug, projectName: project.name, teamSlug: project.teamSlug };
  } catch (error) {
    if (isErrorOf(error, BackendNotFoundError) && error.upstreamCode === "ProjectNotFound") return null;
    throw error;
  }
}

export interface CreateProjectInput extends TokenInput {
  teamSlug: string;
  projectName: string;
  /** Deployment created with the project; none when omitted. */
  deploymentType?: DeploymentType;
}

/** `POST /v1/teams/{team_id}/create_project`; the team id is read from the token unless given. */
export async function createProjectWithToken(
  input: CreateProjectInput & { teamId?: number },
  options: ManagementApiOptions = {},
): Promise<CreateProjectResponse> {
  const teamId = input.teamId ?? (await getTokenTeamId(input, options));
  const created = await callManagement({ operation: "create project", bearerToken: input.bearerToken }, options, (client, init) =>
    client.POST("/teams/{team_id}/create_project", {
      ...init,
      params: { path: { team_id: teamId } },
      body: { projectName: input.projectName, ...(input.deploymentType && { deploymentType: input.deploymentType }) },
    }),
  );
  return {
    projectSlug: created.slug,
    projectId: created.id,
    teamSlug: input.teamSlug,
    ...(created.deploymentName && { deploymentName: created.deploymentName }),
    ...(created.deploymentUrl && { prodUrl: created.deploymentUrl }),
  };
}

/** The project's default deployment of this type (`list_deployments`), created when it has none (`create_deployment`). */
async function ensureDeployment(
  input: TokenInput & { projectId: number; deploymentType: DeploymentType },
  options: ManagementApiOptions,
): Promise<{ deploymentName: string; url: string }> {
  const { bearerToken, projectId, deploymentType } = input;
  const listed = await callManagement({ operation: "list the deployments", bearerToken }, options, (client, init) =>
    client.GET("/projects/{project_id}/list_deployments", { ...init, params: { path: { project_id: projectId }, query: { deploymentType } } }),
  );
  type Listed = (typeof listed)[number];
  const cloud = listed.filter((item): item is Extract<Listed, { kind: "cloud" }> => item.kind === "cloud" && item.deploymentType === deploymentType);
  const deployment: Listed =
    cloud.find((candidate) => candidate.isDefault) ??
    cloud[0] ??
    (await callManagement({ operation: "create the deployment", bearerToken }, options, (client, init) =>
      client.POST("/projects/{project_id}/create_deployment", { ...init, params: { path: { project_id: projectId } }, body: { type: deploymentType } }),
    ));
  if (deployment.kind !== "cloud") {
    throw new BackendApiError("Failed to create the deployment: the backend created a local deployment.", { operation: "create the deployment" }, 502, "backend_bad_response");
  }
  return { deploymentName: deployment.name, url: deployment.deploymentUrl };
}

/** `POST /v1/deployments/{name}/create_deploy_key`: a key for this deployment only (secret). */
async function createDeployKey(input: TokenInput & { deploymentName: string }, options: ManagementApiOptions): Promise<string> {
  const { deployKey } = await callManagement({ operation: "create a deploy key", bearerToken: input.bearerToken }, options, (client, init) =>
    client.POST("/deployments/{deployment_name}/create_deploy_key", {
      ...init,
      params: { path: { deployment_name: input.deploymentName } },
      body: { name: DEPLOY_KEY_NAME },
    }),
  );
  return deployKey;
}

export interface ProvisionDeploymentInput extends TokenInput {
  teamSlug: string;
  projectSlug: string;
  /** @default "dev" */
  deploymentType?: DeploymentType;
}

/** A project's deployment of this type (created when missing) and a fresh deploy key scoped to it. */
export async function provisionDeploymentWithToken(input: ProvisionDeploymentInput, options: ManagementApiOptions = {}): Promise<DeploymentProvisionResponse> {
  const deploymentType = input.deploymentType ?? "dev";
  const project = await findBackendProjectBySlug({ bearerToken: input.bearerToken, team: input.teamSlug, projectSlug: input.projectSlug }, options);
  if (!project) {
    throw new BackendNotFoundError(
      { operation: "provision the deployment", upstreamStatus: 404, upstreamCode: "ProjectNotFound" },
      `Project '${input.projectSlug}' does not exist on team '${input.teamSlug}'.`,
    );
  }
  const deployment = await ensureDeployment({ bearerToken: input.bearerToken, projectId: project.projectId, deploymentType }, options);
  const adminKey = await createDeployKey({ bearerToken: input.bearerToken, deploymentName: deployment.deploymentName }, options);
  return { ...deployment, adminKey, deploymentType };
}

/** Options of the full provisioning workflows. */
export interface ProvisionWorkflowOptions extends ManagementApiOptions, RetryOptions {
  /**
   * Called once the backend project exists (created or adopted) and before its deployment is
   * provisioned, so the caller can record the project id: a failure later then never leaves an
   * unknown project behind.
   */
  onProjectCreated?: (project: CreateProjectResponse) => void | Promise<void>;
  /**
   * A project an earlier, interrupted run already created (as reported to `onProjectCreated`):
   * the workflow then only provisions its deployment and never creates a second project.
   */
  resumeFrom?: CreateProjectResponse;
}

/**
 * The project named `projectName` when it already exists on the team: only for slug-shaped names
 * (their own slug, e.g. from {@link backendProjectNameFor}), and only when the names match exactly.
 */
async function findOwnProject(input: TokenInput & { teamSlug: string; projectName: string }, options: ManagementApiOptions): Promise<CreateProjectResponse | null> {
  if (!SLUG_SHAPED.test(input.projectName)) return null;
  // By team slug: a slug that is not the token's team answers TeamNotFound instead of misfiling the project.
  const found = await findBackendProjectBySlug({ bearerToken: input.bearerToken, team: input.teamSlug, projectSlug: input.projectName }, options);
  return found && found.projectName === input.projectName ? { projectSlug: found.projectSlug, projectId: found.projectId, teamSlug: found.teamSlug } : null;
}

/**
 * A deterministic backend project name for one of our projects: provisioning the same project
 * twice (a crashed run, a lost answer) finds and adopts the first backend project instead of
 * creating a second one.
 */
export function backendProjectNameFor(productProjectId: string): string {
  return `app-${productProjectId.toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 32)}`;
}

/**
 * Full workflow: adopt the project named `projectName` when it exists (slug-shaped names), else
 * create it with a dev deployment; ensure the dev deployment; create a deploy key scoped to it.
 * Transient failures (5xx, 429, network, timeouts) are retried with exponential backoff; a
 * retried create looks the project up again first, so a lost answer does not create two.
 */
export async function provisionProjectWithToken(
  input: Omit<CreateProjectInput, "deploymentType"> & {
    /** Whose token the bearer is: the platform's (managed; a key carrying it is refused) or the user's own OAuth token. */
    owner: "platform" | "user";
  },
  options: ProvisionWorkflowOptions = {},
): Promise<ProvisionedBackendProject> {
  const retry = { ...options, backoffFactor: options.backoffFactor ?? 2 };
  let created = options.resumeFrom;
  if (!created) {
    const teamId = await withRetries("read the token details", () => getTokenTeamId(input, options), retry);
    created = await withRetries(
      "create project",
      async () => (await findOwnProject(input, options)) ?? createProjectWithToken({ ...input, teamId, deploymentType: "dev" }, options),
      retry,
    );
    await options.onProjectCreated?.(created);
  }
  const project = created;
  const deployment =
    project.deploymentName && project.prodUrl
      ? { deploymentName: project.deploymentName, url: project.prodUrl }
      : await withRetries("provision the deployment", () => ensureDeployment({ bearerToken: input.bearerToken, projectId: project.projectId, deploymentType: "dev" }, options), retry);
  const deployKey = await withRetries("create a deploy key", () => createDeployKey({ bearerToken: input.bearerToken, deploymentName: deployment.deploymentName }, options), retry);
  const token = toStoredAdminKey(deployKey, {
    teamSlug: project.teamSlug,
    projectSlug: project.projectSlug,
    deploymentName: deployment.deploymentName,
    ...(input.owner === "platform" && { platformToken: input.bearerToken }),
  });
  return {
    token,
    deploymentName: deployment.deploymentName,
    deploymentUrl: deployment.url,
    projectSlug: project.projectSlug,
    teamSlug: project.teamSlug,
    projectId: project.projectId,
  };
}
