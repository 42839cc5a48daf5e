import type { Config } from "@/lib/config";
import { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH, getEmulatorIdentity } from "@/lib/emulator/identity";
import { registerSecret } from "@/lib/log/redact";
import { DEFAULT_DASHBOARD_HOST, DEFAULT_PROVISION_HOST, type ManagementApiOptions } from "@/lib/backend";

/**
 * The choice between the built-in emulator and a hosted backend is made here, above both:
 * lib/backend is a client that knows neither, and lib/emulator only serves the API.
 */

/**
 * Effective backend configuration. Its host and timeout fields match the client options, so the
 * object can be passed as `options` to every lib/backend function.
 */
export interface BackendSettings extends Required<Pick<ManagementApiOptions, "provisionHost" | "timeoutMs">> {
  provider: Config["BACKEND_PROVIDER"];
  dashboardHost: string;
  /** Team-scoped token for managed mode (secret); undefined when not configured. */
  teamScopedToken?: string;
  teamSlug?: string;
  oauthClientId?: string;
  /** Secret. */
  oauthClientSecret?: string;
}

/**
 * Resolves hosts, team credentials and OAuth app for the configured provider.
 * - `local`: hosts default to this app's emulator (`<PUBLIC_BASE_URL>/emulator`, dashboard under
 *   `/emulator/dashboard`); the team token/slug and OAuth app are the emulator's built-in ones,
 *   so enabling works offline with no configuration.
 * - `hosted`: hosts default to the hosted API and dashboard; credentials come only from the env.
 * Secrets found here are registered for log redaction.
 */
export function getBackendSettings(config: Config): BackendSettings {
  const local = config.BACKEND_PROVIDER === "local";
  const identity = local ? getEmulatorIdentity(config) : undefined;
  const settings: BackendSettings = {
    provider: config.BACKEND_PROVIDER,
    provisionHost: config.PROVISION_HOST ?? (local ? config.PUBLIC_BASE_URL + EMULATOR_MOUNT_PATH : DEFAULT_PROVISION_HOST),
    dashboardHost: config.DASHBOARD_HOST ?? (local ? config.PUBLIC_BASE_URL + EMULATOR_MOUNT_PATH + EMULATOR_DASHBOARD_PREFIX : DEFAULT_DASHBOARD_HOST),
    timeoutMs: config.BACKEND_API_TIMEOUT_MS,
    teamScopedToken: identity?.teamToken ?? config.BACKEND_TEAM_SCOPED_TOKEN,
    teamSlug: identity?.teamSlug ?? config.BACKEND_TEAM_SLUG,
    oauthClientId: identity?.oauthClientId ?? config.BACKEND_OAUTH_CLIENT_ID,
    oauthClientSecret: identity?.oauthClientSecret ?? config.BACKEND_OAUTH_CLIENT_SECRET,
  };
  registerSecret(settings.teamScopedToken);
  registerSecret(settings.oauthClientSecret);
  return settings;
}

/** True when managed mode can run: both the team token and the team slug are known (spec 5.1). */
export function isManagedModeConfigured(settings: BackendSettings): settings is BackendSettings & { teamScopedToken: string; teamSlug: string } {
  return Boolean(settings.teamScopedToken && settings.teamSlug);
}
