import type { EmulatorContext } from "./context";
import { requireKey } from "./deployment";
import { EmulatorError } from "./http";
import { requireTeam } from "./management";
import type { EmulatorDeployment } from "./store";

/**
 * Documented operations of the management and deployment APIs that a local deployment cannot
 * carry out. They answer as the hosted API refuses a request it cannot apply: 400 with
 * `{code, message}`, the message saying why; the caller's credentials are checked first, so a bad
 * token still answers 401 as on every other operation.
 */

const CODE = "NotAvailableOnLocalDeployment";
/** The documents declare 403 as the refusal of these two; every other operation refuses with 400. */
const DOCUMENTED_FORBIDDEN = new Set(["POST /teams/create_team", "POST /teams/{team_id}/create_access_token"]);

/** Why an operation cannot apply locally, by the document's path template (method + path). */
const MANAGEMENT_REASONS = {
  "PATCH /projects/{project_id}": "projects of the local emulator keep the name they were created with",
  "PATCH /deployments/{deployment_name}": "local deployments have no reference, class or expiry to change",
  "POST /deployments/{deployment_name}/transfer": "the local emulator has a single team and project ownership does not move",
  "GET /teams/{team_id}/list_local_deployments": "`npx convex dev --local` deployments are not tracked by the local emulator",
  "GET /deployments/{deployment_name}/list_deploy_keys": "deploy keys of the local emulator are stored hashed, without names to list",
  "POST /deployments/{deployment_name}/delete_deploy_key": "deploy keys of the local emulator are stored hashed, without names to delete by",
  "POST /projects/{project_id}/create_preview_deploy_key": "the local emulator hosts dev and prod deployments only, no previews",
  "GET /projects/{project_id}/list_preview_deploy_keys": "the local emulator hosts dev and prod deployments only, no previews",
  "POST /projects/{project_id}/delete_preview_deploy_key": "the local emulator hosts dev and prod deployments only, no previews",
  "GET /list_personal_access_tokens": "the local emulator has no user accounts, only its team token",
  "POST /create_personal_access_token": "the local emulator has no user accounts, only its team token",
  "POST /delete_personal_access_token": "the local emulator has no user accounts, only its team token",
  "GET /teams/{team_id}/list_access_tokens": "the team token of the local emulator comes from its configuration",
  "POST /teams/{team_id}/delete_access_token": "the team token of the local emulator comes from its configuration",
  "POST /teams/{team_id}/create_access_token": "the team token of the local emulator comes from its configuration",
  "POST /deployments/{deployment_name}/create_custom_domain": "a local deployment is served on a loopback port, not under a domain",
  "POST /deployments/{deployment_name}/delete_custom_domain": "a local deployment is served on a loopback port, not under a domain",
  "GET /deployments/{deployment_name}/custom_domains": "a local deployment is served on a loopback port, not under a domain",
  "GET /teams/{team_id}/list_members": "the local emulator has no user accounts, so its team has no members",
  "POST /teams/create_team": "the local emulator has a single team, from its configuration",
  "GET /teams/{team_id}/list_audit_log_events": "the local emulator keeps no audit log",
  "POST /teams/{team_id}/invite_team_member": "the local emulator has no user accounts to invite",
  "GET /teams/{team_id}/list_pending_invites": "the local emulator has no user accounts to invite",
  "POST /teams/{team_id}/cancel_team_member_invite": "the local emulator has no user accounts to invite",
  "POST /teams/{team_id}/create_custom_role": "the local emulator has no user accounts to give roles",
  "GET /teams/{team_id}/list_custom_roles": "the local emulator has no user accounts to give roles",
  "POST /teams/{team_id}/update_custom_role": "the local emulator has no user accounts to give roles",
  "POST /teams/{team_id}/delete_custom_role": "the local emulator has no user accounts to give roles",
  "POST /teams/{team_id}/update_team_member_role": "the local emulator has no user accounts to give roles",
} as const;

const DEPLOYMENT_REASONS = {
  "GET /list_audit_log_events": "the local emulator keeps no audit log",
  "GET /get_current_usage": "the local emulator does not meter usage",
  "GET /list_usage_limits": "the local emulator does not meter usage, so it has no limits to set",
  "POST /create_usage_limit": "the local emulator does not meter usage, so it has no limits to set",
  "POST /update_usage_limit/{id}": "the local emulator does not meter usage, so it has no limits to set",
  "POST /delete_usage_limit/{id}": "the local emulator does not meter usage, so it has no limits to set",
  "POST /update_canonical_url": "a local deployment is served on its loopback port only",
  "GET /list_log_streams": "log streams are not served by local deployments: read logs with `npx convex logs`",
  "GET /get_log_stream/{id}": "log streams are not served by local deployments: read logs with `npx convex logs`",
  "POST /delete_log_stream/{id}": "log streams are not served by local deployments: read logs with `npx convex logs`",
  "POST /create_log_stream": "log streams are not served by local deployments: read logs with `npx convex logs`",
  "POST /update_log_stream/{id}": "log streams are not served by local deployments: read logs with `npx convex logs`",
  "POST /rotate_webhook_secret/{id}": "log streams are not served by local deployments: read logs with `npx convex logs`",
  "POST /data/sync": "data sync to external stores is not served by local deployments",
  "GET /data/list_active_syncs": "data sync to external stores is not served by local deployments",
} as const;

interface NotLocalRoute<P> {
  method: string;
  pattern: RegExp;
  handler: (request: Request, context: EmulatorContext, subject: P) => Promise<Response>;
}

/** A route per operation: the template's `{...}` segments match any path segment. */
function routes<P>(reasons: Record<string, string>, prefix: string, authorize: (request: Request, context: EmulatorContext, subject: P) => Promise<unknown>): NotLocalRoute<P>[] {
  return Object.entries(reasons).map(([operation, reason]) => {
    const [method, template] = operation.split(" ");
    const pattern = new RegExp(`^${prefix}${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    return {
      method,
      pattern,
      handler: async (request, context, subject) => {
        await authorize(request, context, subject);
        throw new EmulatorError(DOCUMENTED_FORBIDDEN.has(operation) ? 403 : 400, CODE, `${method} ${template} cannot apply to a local deployment: ${reason}.`);
      },
    };
  });
}

export const NOT_LOCAL_MANAGEMENT_ROUTES = routes<string>(MANAGEMENT_REASONS, "/v1", (request, context) => requireTeam(request, context));
export const NOT_LOCAL_DEPLOYMENT_ROUTES = routes<EmulatorDeployment>(DEPLOYMENT_REASONS, "/api/v1", requireKey);
