// A user's own script on @convex-dev/platform, as the README shows it: createManagementClient reads
// CONVEX_PROVISION_HOST, the team token comes from the environment. Calls every operation of both
// clients and prints one JSON line per call ({step, status, data | error}) for
// tests/contract/platform-client.test.ts.
import { createDeploymentClient, createManagementClient } from "@convex-dev/platform";
import { ConvexHttpClient } from "convex/browser";

const management = createManagementClient(process.env.CONVEX_TEAM_TOKEN);
const report = (step, { data, error, response }) => {
  console.log(JSON.stringify({ step, status: response.status, ...(error ? { error } : { data: data ?? null }) }));
  return data;
};

const { teamId } = report("token_details", await management.GET("/token_details"));
const team = { params: { path: { team_id: teamId } } };
const created = report("create_project", await management.POST("/teams/{team_id}/create_project", { ...team, body: { projectName: "users-own-app", deploymentType: "dev" } }));
report("list_projects", await management.GET("/teams/{team_id}/projects", { params: { path: { team_id: teamId }, query: { q: "users-own" } } }));
const bySlug = { params: { path: { team_id_or_slug: String(teamId), project_slug: created.slug } } };
report("get_project_by_slug", await management.GET("/teams/{team_id_or_slug}/projects/{project_slug}", bySlug));
const project = { params: { path: { project_id: created.id } } };
report("get_project", await management.GET("/projects/{project_id}", project));
report("list_deployments", await management.GET("/projects/{project_id}/list_deployments", project));
const prod = report("create_deployment", await management.POST("/projects/{project_id}/create_deployment", { ...project, body: { type: "prod" } }));
report("get_project_deployment", await management.GET("/projects/{project_id}/deployment", { params: { ...project.params, query: { defaultProd: true } } }));
report("get_project_deployment_by_slug", await management.GET("/teams/{team_id_or_slug}/projects/{project_slug}/deployment", { params: { ...bySlug.params, query: { defaultDev: true } } }));
report("list_team_deployments", await management.GET("/teams/{team_id}/list_deployments", { params: { path: { team_id: teamId }, query: { projectId: created.id, limit: 1 } } }));
report("list_deployment_classes", await management.GET("/teams/{team_id}/list_deployment_classes", team));
report("list_deployment_regions", await management.GET("/teams/{team_id}/list_deployment_regions", team));
const deployment = { params: { path: { deployment_name: created.deploymentName } } };
report("get_deployment", await management.GET("/deployments/{deployment_name}", deployment));
const { deployKey } = report("create_deploy_key", await management.POST("/deployments/{deployment_name}/create_deploy_key", { ...deployment, body: { name: "my-script" } }));
report(
  "update_default_environment_variables",
  await management.POST("/projects/{project_id}/update_default_environment_variables", { ...project, body: { changes: [{ name: "DEFAULT_A", deploymentType: "dev", value: "1" }] }, parseAs: "text" }),
);
report("list_default_environment_variables", await management.GET("/projects/{project_id}/list_default_environment_variables", project));

// Operations a local deployment cannot carry out: each answers a documented refusal.
const withBody = (params, body) => ({ ...params, body });
const notLocal = [
  ["update_project", "PATCH", "/projects/{project_id}", withBody(project, { name: "renamed" })],
  ["update_deployment", "PATCH", "/deployments/{deployment_name}", withBody(deployment, { reference: "renamed" })],
  ["transfer_deployment", "POST", "/deployments/{deployment_name}/transfer", withBody(deployment, { destinationProjectId: created.id })],
  ["list_local_deployments", "GET", "/teams/{team_id}/list_local_deployments", team],
  ["list_deploy_keys", "GET", "/deployments/{deployment_name}/list_deploy_keys", deployment],
  ["delete_deploy_key", "POST", "/deployments/{deployment_name}/delete_deploy_key", withBody(deployment, { id: "my-script" })],
  ["create_preview_deploy_key", "POST", "/projects/{project_id}/create_preview_deploy_key", withBody(project, { name: "preview" })],
  ["list_preview_deploy_keys", "GET", "/projects/{project_id}/list_preview_deploy_keys", project],
  ["delete_preview_deploy_key", "POST", "/projects/{project_id}/delete_preview_deploy_key", withBody(project, { id: "preview" })],
  ["list_personal_access_tokens", "GET", "/list_personal_access_tokens", {}],
  ["create_personal_access_token", "POST", "/create_personal_access_token", { body: { name: "mine" } }],
  ["delete_personal_access_token", "POST", "/delete_personal_access_token", { body: { id: "mine" } }],
  ["list_access_tokens", "GET", "/teams/{team_id}/list_access_tokens", team],
  ["create_access_token", "POST", "/teams/{team_id}/create_access_token", withBody(team, { name: "ci" })],
  ["delete_access_token", "POST", "/teams/{team_id}/delete_access_token", withBody(team, { id: "ci" })],
  ["create_custom_domain", "POST", "/deployments/{deployment_name}/create_custom_domain", withBody(deployment, { domain: "api.example.com", requestDestination: "convexCloud" })],
  ["delete_custom_domain", "POST", "/deployments/{deployment_name}/delete_custom_domain", withBody(deployment, { domain: "api.example.com", requestDestination: "convexCloud" })],
  ["list_custom_domains", "GET", "/deployments/{deployment_name}/custom_domains", deployment],
  ["list_members", "GET", "/teams/{team_id}/list_members", team],
  ["create_team", "POST", "/teams/create_team", { body: { name: "Second team", defaultRegion: "aws-us-east-1" } }],
  ["list_team_audit_log_events", "GET", "/teams/{team_id}/list_audit_log_events", team],
  ["invite_team_member", "POST", "/teams/{team_id}/invite_team_member", withBody(team, { email: "friend@example.com", role: "developer" })],
  ["list_pending_invites", "GET", "/teams/{team_id}/list_pending_invites", team],
  ["cancel_team_member_invite", "POST", "/teams/{team_id}/cancel_team_member_invite", withBody(team, { email: "friend@example.com" })],
  ["create_custom_role", "POST", "/teams/{team_id}/create_custom_role", withBody(team, { name: "reader", statements: [] })],
  ["list_custom_roles", "GET", "/teams/{team_id}/list_custom_roles", team],
  ["update_custom_role", "POST", "/teams/{team_id}/update_custom_role", withBody(team, { id: 1, name: "reader", statements: [] })],
  ["delete_custom_role", "POST", "/teams/{team_id}/delete_custom_role", withBody(team, { id: 1 })],
  ["update_team_member_role", "POST", "/teams/{team_id}/update_team_member_role", withBody(team, { memberId: 1, role: "admin" })],
];
for (const [step, method, path, options] of notLocal) report(step, await management[method](path, options));

const client = createDeploymentClient(created.deploymentUrl, deployKey);
report("update_environment_variables", await client.POST("/update_environment_variables", { body: { changes: [{ name: "FROM_SCRIPT", value: "yes" }] }, parseAs: "text" }));
report("list_environment_variables", await client.GET("/list_environment_variables"));
report("get_canonical_urls", await client.GET("/get_canonical_urls"));
report("deployment_info", await client.GET("/deployment_info"));

// A paused deployment refuses function calls (this one has no functions: unpaused, the call is "not found").
const callFunction = (step) =>
  new ConvexHttpClient(created.deploymentUrl).query("messages:list", {}).then(
    () => console.log(JSON.stringify({ step, status: 200 })),
    (error) => console.log(JSON.stringify({ step, status: 200, error: { message: error.message } })),
  );
report("pause_deployment", await client.POST("/pause_deployment", { parseAs: "text" }));
await callFunction("query_while_paused");
report("unpause_deployment", await client.POST("/unpause_deployment", { parseAs: "text" }));
await callFunction("query_after_unpause");

const byId = { params: { path: { id: "1" } } };
const usageLimit = { enabled: true, limit: 1000, limitType: "disable", metric: "functionCalls", window: "month" };
const webhook = { logStreamType: "webhook", url: "http://127.0.0.1:9/logs", format: "json" };
const deploymentNotLocal = [
  ["list_deployment_audit_log_events", "GET", "/list_audit_log_events", {}],
  ["get_current_usage", "GET", "/get_current_usage", {}],
  ["list_usage_limits", "GET", "/list_usage_limits", {}],
  ["create_usage_limit", "POST", "/create_usage_limit", { body: usageLimit }],
  ["update_usage_limit", "POST", "/update_usage_limit/{id}", withBody(byId, usageLimit)],
  ["delete_usage_limit", "POST", "/delete_usage_limit/{id}", byId],
  ["update_canonical_url", "POST", "/update_canonical_url", { body: { requestDestination: "convexCloud", url: "https://api.example.com" } }],
  ["list_log_streams", "GET", "/list_log_streams", {}],
  ["get_log_stream", "GET", "/get_log_stream/{id}", byId],
  ["create_log_stream", "POST", "/create_log_stream", { body: webhook }],
  ["update_log_stream", "POST", "/update_log_stream/{id}", withBody(byId, { logStreamType: "webhook", url: "http://127.0.0.1:9/other" })],
  ["rotate_webhook_secret", "POST", "/rotate_webhook_secret/{id}", byId],
  ["delete_log_stream", "POST", "/delete_log_stream/{id}", byId],
  ["data_sync", "POST", "/data/sync", { body: {} }],
  ["list_active_syncs", "GET", "/data/list_active_syncs", {}],
];
for (const [step, method, path, options] of deploymentNotLocal) report(step, await client[method](path, options));

const prodDeployment = { params: { path: { deployment_name: prod.name } } };
report("delete_deployment", await management.POST("/deployments/{deployment_name}/delete", { ...prodDeployment, parseAs: "text" }));
report("get_deployment_after_delete", await management.GET("/deployments/{deployment_name}", prodDeployment));
report("delete_project", await management.POST("/projects/{project_id}/delete", { ...project, parseAs: "text" }));
report("get_project_by_slug_after_delete", await management.GET("/teams/{team_id_or_slug}/projects/{project_slug}", bySlug));
