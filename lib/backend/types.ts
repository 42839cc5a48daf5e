/** Deployment kinds the management API provisions. */
export type DeploymentType = "dev" | "prod";

/** Spec 2.2: what a full provisioning yields; `token` is the deployment-scoped admin key (secret). */
export interface BackendProject {
  /** Deployment-scoped admin key, `project:<team_slug>:<project_slug>|<token>` (secret, server-side only). */
  token: string;
  deploymentName: string;
  deploymentUrl: string;
  projectSlug: string;
  teamSlug: string;
}

/**
 * Result of the full provisioning workflows: the spec's BackendProject plus what callers must
 * persist or show (the numeric project id is needed later by {@link deleteManagedProject}).
 */
export interface ProvisionedBackendProject extends BackendProject {
  /** Numeric id of the backend project; store it, project deletion needs it. */
  projectId: number;
  /** Projects the team may still create after this one. */
  projectsRemaining: number;
  /** Set when the team is about to run out of projects (2 or fewer left). */
  warningMessage?: string;
}

/**
 * Spec 2.3. `deploymentName`, `prodUrl` and `adminKey` are optional because current answers of
 * the hosted API may omit them (the admin key was removed in 2026); nothing depends on them.
 */
export interface CreateProjectResponse {
  projectSlug: string;
  projectId: number;
  teamSlug: string;
  deploymentName?: string;
  /** Despite the name, the dev deployment's URL. */
  prodUrl?: string;
  /** Secret; absent in current answers. */
  adminKey?: string;
  projectsRemaining: number;
}

/** Answer of `provision_and_authorize`: one deployment and a key scoped to it. */
export interface DeploymentProvisionResponse {
  deploymentName: string;
  url: string;
  /** Deployment-scoped admin key (secret). */
  adminKey: string;
  deploymentType?: DeploymentType;
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

/** Spec 2.5. */
export interface EnvVar {
  name: string;
  value: string;
}

/** What the deployment-level calls need from a project: where it is and the key to use. */
export type DeploymentTarget = Pick<BackendProject, "deploymentUrl" | "token">;
