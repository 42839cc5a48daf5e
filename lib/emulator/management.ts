import { z } from "zod";
import type { SqlExecutor } from "@/lib/store";
import type { EmulatorContext } from "./context";
import { EmulatorError, authorizationCredential, randomSecret, readJson, readQuery } from "./http";
import { randomDeploymentName, slugify, suffixedSlug } from "./names";
import {
  applyDefaultEnvChanges,
  deleteDeployment,
  deleteProject,
  findDeployment,
  findProject,
  findTeamByToken,
  insertDeployKey,
  insertDeployment,
  insertProject,
  listDefaultEnvVars,
  listDeployments,
  listProjects,
  listTeamDeployments,
  lockTeamAndCountProjects,
  type DeploymentType,
  type EmulatorDeployment,
  type EmulatorProject,
  type EmulatorTeam,
} from "./store";

/**
 * The documented v1 management API (`/v1/...`, management-api.json) for the operations the
 * product and users' tooling call. Bearer: a team token or an OAuth team token.
 */

/** The emulator hosts dev and prod deployments only; preview/custom answer a clear 400. */
const createDeploymentType = z.enum(["dev", "prod", "preview", "custom"]);
const region = z.enum(["aws-us-east-1", "aws-eu-west-1"]);

const createProjectBody = z.strictObject({
  projectName: z.string().trim().min(1).max(200),
  deploymentType: createDeploymentType.nullish(),
  deploymentClass: z.string().nullish(),
  deploymentRegion: region.nullish(),
});

const createDeploymentBody = z.strictObject({
  type: createDeploymentType,
  class: z.string().nullish(),
  region: region.nullish(),
  reference: z.string().nullish(),
  isDefault: z.boolean().nullish(),
  expiresAt: z.number().int().nullish(),
});

const createDeployKeyBody = z.object({
  name: z.string().min(1),
  allowedActions: z.array(z.string()).optional(),
  expiresAt: z.number().int().nullish(),
});

const defaultEnvChanges = z.strictObject({
  changes: z.array(z.strictObject({ name: z.string().min(1), deploymentType: createDeploymentType, value: z.string().nullish() })),
});

const listProjectsQuery = z.object({
  cursor: z.string().regex(/^\d+$/).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(100),
  q: z.string().optional(),
});

/** Which deployment of a project `GET .../deployment` answers: by reference (its name here) or the default of a type. */
const deploymentSelectorQuery = z.object({
  reference: z.string().optional(),
  defaultProd: z.enum(["true", "false"]).optional(),
  defaultDev: z.enum(["true", "false"]).optional(),
});

/** Every emulated deployment is its project's default and has no creator: other filters of those match nothing. */
const listTeamDeploymentsQuery = listProjectsQuery.extend({
  projectId: z.coerce.number().int().optional(),
  deploymentType: createDeploymentType.optional(),
  isDefault: z.enum(["true", "false"]).optional(),
  creator: z.string().optional(),
});

const deploymentTypeQuery = z.object({ deploymentType: createDeploymentType.optional() });
const defaultEnvQuery = deploymentTypeQuery.extend({ name: z.string().optional() });

/** Attempts at a free random name or slug before giving up (collisions are rare). */
const NAME_ATTEMPTS = 8;
/** What the emulator reports as region and class of every deployment. */
const DEPLOYMENT_REGION = "aws-us-east-1";
const DEPLOYMENT_CLASS = "s16";
const DEPLOYMENT_REGION_NAME = "US East (N. Virginia)";

/** The team of the Bearer token; deployment keys and unknown tokens are 401, as upstream. */
export async function requireTeam(request: Request, context: EmulatorContext): Promise<EmulatorTeam> {
  const token = authorizationCredential(request, "Bearer");
  if (!token) throw new EmulatorError(401, "AccessTokenInvalid", "An access token is required: send Authorization: Bearer <token>.");
  const team = await findTeamByToken(context.db, token);
  if (!team) throw new EmulatorError(401, "AccessTokenInvalid", "Access Token could not be decoded or is not valid.");
  return team;
}

/** The token's team when `idOrSlug` names it; any other team is unknown to this token. */
async function requireTeamParam(request: Request, context: EmulatorContext, idOrSlug: string): Promise<EmulatorTeam> {
  const team = await requireTeam(request, context);
  if (idOrSlug !== String(team.id) && idOrSlug !== team.slug) throw new EmulatorError(404, "TeamNotFound", `Team '${idOrSlug}' not found.`);
  return team;
}

const projectNotFound = () => new EmulatorError(404, "ProjectNotFound", "The requested project does not exist");

async function requireProject(request: Request, context: EmulatorContext, projectId: string): Promise<EmulatorProject> {
  const team = await requireTeam(request, context);
  const id = Number(projectId);
  const project = Number.isSafeInteger(id) ? await findProject(context.db, team.id, { id }) : null;
  if (!project) throw projectNotFound();
  return project;
}

async function requireDeployment(request: Request, context: EmulatorContext, name: string): Promise<EmulatorDeployment> {
  const team = await requireTeam(request, context);
  const deployment = await findDeployment(context.db, { name });
  if (!deployment || deployment.teamId !== team.id) {
    throw new EmulatorError(404, "DeploymentNotFound", `The requested deployment ${name.slice(0, 100)} does not exist`);
  }
  return deployment;
}

function hostedType(type: z.output<typeof createDeploymentType>): DeploymentType {
  if (type !== "dev" && type !== "prod") {
    throw new EmulatorError(400, "DeploymentTypeNotSupported", `The local emulator only creates dev and prod deployments, not ${type}.`);
  }
  return type;
}

/** Creates the project's deployment of this type under a fresh random name; null when it already has one. */
async function insertFreshDeployment(tx: SqlExecutor, projectId: number, type: DeploymentType): Promise<EmulatorDeployment | null> {
  for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
    if (await findDeployment(tx, { projectId, deploymentType: type })) return null;
    const name = randomDeploymentName();
    if (await insertDeployment(tx, { name, projectId, deploymentType: type })) return findDeployment(tx, { name });
  }
  throw new EmulatorError(500, "InternalServerError", "Could not allocate a deployment name.");
}

/** `PlatformDeploymentResponse` (kind cloud); opening the listener yields its URL. */
async function deploymentResponse(context: EmulatorContext, deployment: EmulatorDeployment) {
  return {
    kind: "cloud" as const,
    id: deployment.id,
    name: deployment.name,
    createTime: deployment.createdAt.getTime(),
    deploymentType: deployment.deploymentType,
    projectId: deployment.projectId,
    creator: null,
    region: DEPLOYMENT_REGION,
    isDefault: true,
    reference: deployment.name,
    deploymentUrl: await context.listeners.urlOf(context.db, deployment),
    class: DEPLOYMENT_CLASS,
  };
}

/** `ProjectResponse`. */
async function projectResponse(context: EmulatorContext, project: EmulatorProject) {
  const deployments = await listDeployments(context.db, project.id);
  const named = (type: DeploymentType) => deployments.find((deployment) => deployment.deploymentType === type)?.name ?? null;
  return {
    id: project.id,
    name: project.name,
    slug: project.slug,
    teamId: project.teamId,
    teamSlug: project.teamSlug,
    createTime: project.createdAt.getTime(),
    devDeploymentName: named("dev"),
    prodDeploymentName: named("prod"),
  };
}

/** `GET /v1/token_details`: every token the emulator issues is team-scoped. */
export async function tokenDetails(request: Request, context: EmulatorContext): Promise<Response> {
  const team = await requireTeam(request, context);
  return Response.json({ type: "teamToken", id: team.id, teamId: team.id, name: `${team.slug} token`, createTime: team.createdAt.getTime() });
}

/** `POST /v1/teams/{team_id}/create_project`. */
export async function createProject(request: Request, context: EmulatorContext, teamId: string): Promise<Response> {
  const team = await requireTeamParam(request, context, teamId);
  const body = await readJson(request, createProjectBody);
  const type = body.deploymentType ? hostedType(body.deploymentType) : null;
  const quota = team.projectQuota ?? context.projectQuota;
  const { projectId, slug, deployment } = await context.db.transaction(async (tx) => {
    const count = await lockTeamAndCountProjects(tx, team.id);
    if (count >= quota) {
      throw new EmulatorError(400, "ProjectQuotaReached", `Team '${team.slug}' has reached its plan limit of ${quota} projects.`);
    }
    const base = slugify(body.projectName);
    let slug = base;
    let id = await insertProject(tx, { teamId: team.id, slug, name: body.projectName });
    for (let attempt = 0; id === null && attempt < NAME_ATTEMPTS; attempt++) {
      slug = suffixedSlug(base);
      id = await insertProject(tx, { teamId: team.id, slug, name: body.projectName });
    }
    if (id === null) throw new EmulatorError(500, "InternalServerError", "Could not allocate a project slug.");
    return { projectId: id, slug, deployment: type ? await insertFreshDeployment(tx, id, type) : null };
  });
  return Response.json({
    projectId,
    id: projectId,
    slug,
    ...(deployment && { deploymentName: deployment.name, deploymentUrl: await context.listeners.urlOf(context.db, deployment) }),
  });
}

/** `GET /v1/teams/{team_id}/projects`: pages by id; the cursor is the last id of the previous page. */
export async function listTeamProjects(request: Request, context: EmulatorContext, teamId: string): Promise<Response> {
  const team = await requireTeamParam(request, context, teamId);
  const query = readQuery(request, listProjectsQuery);
  const rows = await listProjects(context.db, team.id, { afterId: Number(query.cursor ?? 0), limit: query.limit, q: query.q });
  const page = rows.slice(0, query.limit);
  const hasMore = rows.length > query.limit;
  return Response.json({
    items: await Promise.all(page.map((project) => projectResponse(context, project))),
    pagination: { hasMore, nextCursor: hasMore ? String(page[page.length - 1].id) : null },
  });
}

/** `GET /v1/teams/{team_id_or_slug}/projects/{project_slug}`. */
export async function getProjectBySlug(request: Request, context: EmulatorContext, teamIdOrSlug: string, projectSlug: string): Promise<Response> {
  const team = await requireTeamParam(request, context, teamIdOrSlug);
  const project = await findProject(context.db, team.id, { slug: projectSlug });
  if (!project) throw projectNotFound();
  return Response.json(await projectResponse(context, project));
}

/** `GET /v1/projects/{project_id}`. */
export async function getProjectById(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  return Response.json(await projectResponse(context, await requireProject(request, context, projectId)));
}

/** `GET /v1/projects/{project_id}/list_deployments`. */
export async function listProjectDeployments(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  const project = await requireProject(request, context, projectId);
  const { deploymentType } = readQuery(request, deploymentTypeQuery);
  const deployments = await listDeployments(context.db, project.id, deploymentType === "dev" || deploymentType === "prod" ? deploymentType : undefined);
  const listed = deploymentType === "preview" || deploymentType === "custom" ? [] : deployments;
  return Response.json(await Promise.all(listed.map((deployment) => deploymentResponse(context, deployment))));
}

/** `GET /v1/teams/{team_id}/list_deployments`: pages by id, as list projects does. */
export async function listTeamDeploymentsPage(request: Request, context: EmulatorContext, teamId: string): Promise<Response> {
  const team = await requireTeamParam(request, context, teamId);
  const query = readQuery(request, listTeamDeploymentsQuery);
  const hosted = query.deploymentType === undefined || query.deploymentType === "dev" || query.deploymentType === "prod";
  const matchable = hosted && query.isDefault !== "false" && query.creator === undefined;
  const rows = matchable
    ? await listTeamDeployments(context.db, team.id, {
        afterId: Number(query.cursor ?? 0),
        limit: query.limit,
        projectId: query.projectId,
        deploymentType: query.deploymentType as DeploymentType | undefined,
        q: query.q,
      })
    : [];
  const page = rows.slice(0, query.limit);
  const hasMore = rows.length > query.limit;
  return Response.json({
    items: await Promise.all(page.map((deployment) => deploymentResponse(context, deployment))),
    pagination: { hasMore, nextCursor: hasMore ? String(page[page.length - 1].id) : null },
  });
}

/** `POST /v1/projects/{project_id}/create_deployment`: one deployment per type and project. */
export async function createDeployment(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  const project = await requireProject(request, context, projectId);
  const body = await readJson(request, createDeploymentBody);
  const type = hostedType(body.type);
  const deployment = await context.db.transaction((tx) => insertFreshDeployment(tx, project.id, type));
  if (!deployment) {
    throw new EmulatorError(400, "DeploymentReferenceAlreadyExists", `Project '${project.slug}' already has a default ${type} deployment.`);
  }
  return Response.json(await deploymentResponse(context, deployment));
}

/** `GET /v1/deployments/{deployment_name}`. */
export async function getDeployment(request: Request, context: EmulatorContext, name: string): Promise<Response> {
  return Response.json(await deploymentResponse(context, await requireDeployment(request, context, name)));
}

/** `GET /v1/projects/{project_id}/deployment` and its by-slug twin: the deployment named by the query. */
async function selectedDeployment(request: Request, context: EmulatorContext, project: EmulatorProject): Promise<Response> {
  const query = readQuery(request, deploymentSelectorQuery);
  const where = query.reference
    ? { name: query.reference }
    : query.defaultProd === "true"
      ? { projectId: project.id, deploymentType: "prod" as const }
      : query.defaultDev === "true"
        ? { projectId: project.id, deploymentType: "dev" as const }
        : null;
  if (!where) throw new EmulatorError(400, "DeploymentSelectorRequired", "Name the deployment with reference, defaultProd=true or defaultDev=true.");
  const deployment = await findDeployment(context.db, where);
  if (!deployment || deployment.projectId !== project.id) throw new EmulatorError(404, "DeploymentNotFound", `Project '${project.slug}' has no such deployment.`);
  return Response.json(await deploymentResponse(context, deployment));
}

export async function getProjectDeployment(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  return selectedDeployment(request, context, await requireProject(request, context, projectId));
}

export async function getProjectDeploymentBySlug(request: Request, context: EmulatorContext, teamIdOrSlug: string, projectSlug: string): Promise<Response> {
  const team = await requireTeamParam(request, context, teamIdOrSlug);
  const project = await findProject(context.db, team.id, { slug: projectSlug });
  if (!project) throw projectNotFound();
  return selectedDeployment(request, context, project);
}

/** `GET /v1/teams/{team_id}/list_deployment_classes`: the one class every emulated deployment reports. */
export async function listDeploymentClasses(request: Request, context: EmulatorContext, teamId: string): Promise<Response> {
  await requireTeamParam(request, context, teamId);
  return Response.json({ items: [{ type: DEPLOYMENT_CLASS, available: true }] });
}

/** `GET /v1/teams/{team_id}/list_deployment_regions`: the one region every emulated deployment reports. */
export async function listDeploymentRegions(request: Request, context: EmulatorContext, teamId: string): Promise<Response> {
  await requireTeamParam(request, context, teamId);
  return Response.json({ items: [{ name: DEPLOYMENT_REGION, displayName: DEPLOYMENT_REGION_NAME, available: true }] });
}

/** `POST /v1/deployments/{deployment_name}/create_deploy_key` → `dev:<name>|<secret>`, valid for this deployment only. */
export async function createDeployKey(request: Request, context: EmulatorContext, name: string): Promise<Response> {
  const deployment = await requireDeployment(request, context, name);
  await readJson(request, createDeployKeyBody);
  const secret = randomSecret();
  await insertDeployKey(context.db, deployment.name, secret);
  return Response.json({ deployKey: `${deployment.deploymentType}:${deployment.name}|${secret}` });
}

/** `POST /v1/projects/{project_id}/delete`: its deployments, keys and variables go with it. */
export async function deleteProjectById(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  const project = await requireProject(request, context, projectId);
  const deployments = await listDeployments(context.db, project.id);
  if (!(await deleteProject(context.db, project.teamId, project.id))) throw projectNotFound();
  await releaseDeployments(context, deployments.map((deployment) => deployment.name));
  return new Response(null, { status: 200 });
}

/** `POST /v1/deployments/{deployment_name}/delete`: its keys, variables and data go with it. */
export async function deleteDeploymentByName(request: Request, context: EmulatorContext, name: string): Promise<Response> {
  const deployment = await requireDeployment(request, context, name);
  if (!(await deleteDeployment(context.db, deployment.teamId, deployment.name))) {
    throw new EmulatorError(404, "DeploymentNotFound", `The requested deployment ${name.slice(0, 100)} does not exist`);
  }
  await releaseDeployments(context, [deployment.name]);
  return new Response(null, { status: 200 });
}

/** Closes the listeners and workers of deleted deployments and drops their logs. */
async function releaseDeployments(context: EmulatorContext, names: string[]): Promise<void> {
  await Promise.all([context.listeners.closeSome(names), ...names.map((name) => context.runtimes.stop(name))]);
  names.forEach((name) => context.runtimes.logs.forget(name));
}

/** `GET /v1/projects/{project_id}/list_default_environment_variables`: one item per name and value. */
export async function listDefaultEnvironmentVariables(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  const project = await requireProject(request, context, projectId);
  const rows = await listDefaultEnvVars(context.db, project.id, readQuery(request, defaultEnvQuery));
  const items = new Map<string, { name: string; value: string; deploymentTypes: string[] }>();
  for (const row of rows) {
    const key = JSON.stringify([row.name, row.value]);
    const item = items.get(key) ?? { name: row.name, value: row.value, deploymentTypes: [] };
    item.deploymentTypes.push(row.deploymentType);
    items.set(key, item);
  }
  return Response.json({ items: [...items.values()], pagination: { hasMore: false, nextCursor: null } });
}

/** `POST /v1/projects/{project_id}/update_default_environment_variables`. */
export async function updateDefaultEnvironmentVariables(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  const project = await requireProject(request, context, projectId);
  const { changes } = await readJson(request, defaultEnvChanges);
  await context.db.transaction((tx) => applyDefaultEnvChanges(tx, project.id, changes));
  return new Response(null, { status: 200 });
}
