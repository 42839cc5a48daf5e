/** Deployment kinds our provisioning asks for. */
export type DeploymentType = "dev" | "prod";

/** Spec 2.2: what a full provisioning yields; `token` is the deployment-scoped admin key (secret). */
export interface BackendProject {
  /** Deploy key scoped to the deployment, `dev:<deployment>|<token>` as v1 `create_deploy_key` returns it (secret, server-side only). */
  token: string;
  deploymentName: string;
  deploymentUrl: string;
  projectSlug: string;
  teamSlug: string;
}

/**
 * Result of the full provisioning workflows: the spec's BackendProject plus what callers must
 * persist (the numeric project id is needed later by {@link deleteManagedProject}).
 */
export interface ProvisionedBackendProject extends BackendProject {
  /** Numeric id of the backend project; store it, project deletion needs it. */
  projectId: number;
}

/**
 * Spec 2.3, filled from the v1 `create_project` answer (`slug`, `id`, `deploymentName`,
 * `deploymentUrl`). The v1 API reports neither an admin key nor the projects remaining on the
 * team (spec fields `adminKey`, `projectsRemaining`); `deploymentName`/`prodUrl` are set only
 * when a deployment was created with the project.
 */
export interface CreateProjectResponse {
  projectSlug: string;
  projectId: number;
  teamSlug: string;
  deploymentName?: string;
  /** Despite the name, the dev deployment's URL. */
  prodUrl?: string;
  /** Spec 2.3 field (secret): v1 answers never carry it; callers strip it before persisting an answer. */
  adminKey?: string;
}

/** One deployment of a project and a deploy key scoped to it (`provisionManagedDeployment`). */
export interface DeploymentProvisionResponse {
  deploymentName: string;
  url: string;
  /** Deploy key of this deployment only, `dev:<name>|…` (secret). */
  adminKey: string;
  deploymentType: DeploymentType;
}

/** Spec 2.4. */
export interface OAuthTokenResponse {
  /** Secret. */
  access_token: string;
  token_type: "bearer";
  expires_in?: number;
  /** Secret. */
  refresh_token?: string;
}

/** Spec 2.5 (a set; deletion is the v1 API's absent value, not used by the product). */
export interface EnvVar {
  name: string;
  value: string;
}

/** What the deployment-level calls need from a project: where it is and the key to use. */
export type DeploymentTarget = Pick<BackendProject, "deploymentUrl" | "token">;
