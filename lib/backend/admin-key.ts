import { BackendApiError } from "./errors";

/**
 * The one place where admin keys and OAuth team tokens are built and parsed.
 *
 * Spec 2.6 admin key: `project:<team_slug>:<project_slug>|<token>`, where `<token>` must be scoped
 * to one deployment (it comes from the provisioning answer). It is never built from the
 * team-scoped token: a leaked project key must not hand out the whole team.
 */
export interface AdminKeyParts {
  teamSlug: string;
  projectSlug: string;
  /** The secret part after `|`. */
  token: string;
}

const SLUG = /^[A-Za-z0-9_.-]+$/;
const PROJECT_KEY = /^project:([^:|]+):([^:|]+)\|(.+)$/;
/** Other deployment-scoped key shapes the backend hands out: `dev:<name>|…`, `prod:<name>|…`, `<name>|…`. */
const DEPLOYMENT_KEY = /^(?:(?:dev|prod):)?([a-z0-9-]+)\|.+$/;
const OAUTH_TEAM_TOKEN = /^team:([^|]+)\|.+$/;

/** Builds `project:<team_slug>:<project_slug>|<token>` from a deployment-scoped token. */
export function formatAdminKey(parts: AdminKeyParts): string {
  if (!SLUG.test(parts.teamSlug) || !SLUG.test(parts.projectSlug)) {
    throw new TypeError("Team and project slugs may only contain letters, digits, '.', '_' and '-'.");
  }
  if (!parts.token || parts.token.includes("|")) throw new TypeError("The token part of an admin key must be non-empty and contain no '|'.");
  return `project:${parts.teamSlug}:${parts.projectSlug}|${parts.token}`;
}

/** Parses a `project:<team>:<project>|<token>` key; null for any other shape. */
export function parseAdminKey(key: string): AdminKeyParts | null {
  const match = PROJECT_KEY.exec(key);
  if (!match || match[3].includes("|")) return null;
  return { teamSlug: match[1], projectSlug: match[2], token: match[3] };
}

/** The team slug carried by an OAuth team token (`team:<slug>|…`); null for other tokens. */
export function teamSlugFromAccessToken(accessToken: string): string | null {
  return OAUTH_TEAM_TOKEN.exec(accessToken)?.[1] ?? null;
}

/** A key and its secret part, so both can be scrubbed from upstream text. */
export function secretVariants(key: string): string[] {
  const bar = key.indexOf("|");
  return bar >= 0 && bar < key.length - 1 ? [key, key.slice(bar + 1)] : [key];
}

/**
 * Checks the admin key of a provisioning answer before it is stored: it must belong to the
 * provisioned project (or deployment) and, when `platformToken` is given, must not carry that
 * token, i.e. it is deployment-scoped, never the platform's team token in disguise. (A user's own
 * OAuth token may be carried: the hosted API builds OAuth deploy keys from the granted token, and
 * that token is the user's and stored with the project anyway.) Returns the key to store.
 */
export function toStoredAdminKey(
  adminKey: string,
  expected: { teamSlug: string; projectSlug: string; deploymentName: string; platformToken?: string },
): string {
  const operation = "provision the deployment";
  const reject = (why: string) =>
    new BackendApiError(`Failed to ${operation}: the returned admin key ${why}; refusing to store it.`, { operation }, 502, "backend_bad_admin_key");
  if (expected.platformToken && secretVariants(expected.platformToken).some((secret) => adminKey.includes(secret))) {
    throw reject("contains the team-scoped token instead of a deployment-scoped one");
  }
  const parts = parseAdminKey(adminKey);
  if (parts) {
    if (parts.teamSlug !== expected.teamSlug || parts.projectSlug !== expected.projectSlug) {
      throw reject("belongs to another project");
    }
    return adminKey;
  }
  const deployment = DEPLOYMENT_KEY.exec(adminKey);
  if (deployment && deployment[1] === expected.deploymentName) return adminKey;
  throw reject("is not in a known deployment-scoped format");
}
