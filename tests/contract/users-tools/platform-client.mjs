// A user's own script on @convex-dev/platform, as the README shows it: createManagementClient reads
// CONVEX_PROVISION_HOST, the team token comes from the environment. Prints one JSON line per call
// ({step, status, data | error}) for tests/contract/platform-client.test.ts.
import { createDeploymentClient, createManagementClient } from "@convex-dev/platform";

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
report("list_deployments", await management.GET("/projects/{project_id}/list_deployments", project));
const deployment = { params: { path: { deployment_name: created.deploymentName } } };
const { deployKey } = report("create_deploy_key", await management.POST("/deployments/{deployment_name}/create_deploy_key", { ...deployment, body: { name: "my-script" } }));
report(
  "update_default_environment_variables",
  await management.POST("/projects/{project_id}/update_default_environment_variables", { ...project, body: { changes: [{ name: "DEFAULT_A", deploymentType: "dev", value: "1" }] }, parseAs: "text" }),
);
report("list_default_environment_variables", await management.GET("/projects/{project_id}/list_default_environment_variables", project));

const client = createDeploymentClient(created.deploymentUrl, deployKey);
report("update_environment_variables", await client.POST("/update_environment_variables", { body: { changes: [{ name: "FROM_SCRIPT", value: "yes" }] }, parseAs: "text" }));
report("list_environment_variables", await client.GET("/list_environment_variables"));
report("get_canonical_urls", await client.GET("/get_canonical_urls"));

report("delete_project", await management.POST("/projects/{project_id}/delete", { ...project, parseAs: "text" }));
report("get_project_by_slug_after_delete", await management.GET("/teams/{team_id_or_slug}/projects/{project_slug}", bySlug));
