/**
 * Client of the backend's documented v1 Platform API through `@convex-dev/platform`: management
 * (managed + OAuth provisioning) and deployment (environment variables, auth keys). Every function takes its hosts, timeout and fetch through
 * an options object (lib/cloud/backend-settings resolves them for this installation).
 */
export { formatAdminKey, parseAdminKey, teamSlugFromAccessToken, toStoredAdminKey, type AdminKeyParts } from "./admin-key";
export { AUTH_VARIABLES, generateAuthKeys, initializeBackendAuth, type AuthKeys, type SigningJwk } from "./auth-keys";
export {
  DEFAULT_DASHBOARD_HOST,
  DEFAULT_PROVISION_HOST,
  DEFAULT_TIMEOUT_MS,
  type BackendRequestOptions,
  type ManagementApiOptions,
} from "./client";
export { listEnvVariables, queryEnvVariable, queryEnvVariableWithRetries, setEnvVariables, setEnvVariablesWithRetries } from "./env-vars";
export {
  BackendApiError,
  BackendAuthError,
  BackendNetworkError,
  BackendNotFoundError,
  BackendSsoRequiredError,
  BackendTimeoutError,
  ProjectQuotaReachedError,
} from "./errors";
export {
  createManagedProject,
  deleteManagedProject,
  provisionManagedDeployment,
  provisionManagedProject,
  type ManagedProjectInput,
} from "./managed";
export {
  createBackendProject,
  createPkcePair,
  exchangeOAuthCode,
  getOAuthAuthorizeUrl,
  provisionBackendProject,
  type BackendProjectInput,
  type ExchangeOAuthCodeInput,
  type OAuthAuthorizeUrlInput,
} from "./oauth";
export {
  backendProjectNameFor,
  findBackendProjectBySlug,
  getTokenTeamId,
  type BackendProjectSummary,
  type ProvisionWorkflowOptions,
} from "./provisioning";
export { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY_MS, isRetryableBackendError, withRetries, type RetryOptions } from "./retries";
export type {
  BackendProject,
  CreateProjectResponse,
  DeploymentProvisionResponse,
  DeploymentTarget,
  DeploymentType,
  EnvVar,
  OAuthTokenResponse,
  ProvisionedBackendProject,
} from "./types";
