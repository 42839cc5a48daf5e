import { z } from "zod";
import { formatAdminKey } from "@/lib/backend/admin-key";
import type { SqlExecutor } from "@/lib/store";
import { deploymentUrl, type EmulatorContext } from "./context";
import { EmulatorError, authorizationCredential, randomSecret, readJson } from "./http";
import { randomDeploymentName, slugify, suffixedSlug } from "./names";
import {
  deleteProject,
  findDeployment,
  findProject,
  findTeamByToken,
  insertDeployKey,
  insertDeployment,
  insertProject,
  lockTeamAndCountProjects,
  type EmulatorDeployment,
  type EmulatorTeam,
} from "./store";

/** Management endpoints: `/api/create_project`, `/api/deployment/provision_and_authorize`, `/v1/projects/{id}/delete`. */

const deploymentType = z.enum(["dev", "prod"]);

const createProjectBody = z.strictObject({
  team: z.string().min(1),
  projectName: z.string().trim().min(1).max(200),
  deploymentType: deploymentType.nullish(),
  deploymentClass: z.string().nullish(),
  region: z.string().nullish(),
});

const provisionBody = z.strictObject({
  teamSlug: z.string().min(1).nullable(),
  projectSlug: z.string().min(1).nullable(),
  deploymentType: deploymentType,
});

/** Attempts at a free random name or slug before giving up (collisions are rare). */
const NAME_ATTEMPTS = 8;

/** The team of the Bearer token; deployment keys and unknown tokens are 401, as upstream. */
async function requireTeam(request: Request, context: EmulatorContext): Promise<EmulatorTeam> {
  const token = authorizationCredential(request, "Bearer");
  if (!token) throw new EmulatorError(401, "AccessTokenInvalid", "An access token is required: send Authorization: Bearer <token>.");
  const team = await findTeamByToken(context.db, token);
  if (!team) throw new EmulatorError(401, "AccessTokenInvalid", "Access Token could not be decoded or is not valid.");
  return team;
}

function requireSameTeam(team: EmulatorTeam, slug: string): void {
  if (team.slug !== slug) throw new EmulatorError(404, "TeamNotFound", `Team '${slug}' not found.`);
}

/** Creates (or finds) the project's deployment of this type under a fresh random name. */
async function ensureDeployment(tx: SqlExecutor, projectId: number, type: "dev" | "prod"): Promise<EmulatorDeployment> {
  for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
    const existing = await findDeployment(tx, { projectId, deploymentType: type });
    if (existing) return existing;
    await insertDeployment(tx, { name: randomDeploymentName(), projectId, deploymentType: type });
  }
  throw new EmulatorError(500, "InternalServerError", "Could not allocate a deployment name.");
}

export async function createProject(request: Request, context: EmulatorContext): Promise<Response> {
  const team = await requireTeam(request, context);
  const body = await readJson(request, createProjectBody);
  requireSameTeam(team, body.team);
  const quota = team.projectQuota ?? context.projectQuota;
  const result = await context.db.transaction(async (tx) => {
    const count = await lockTeamAndCountProjects(tx, team.id);
    if (count >= quota) {
      throw new EmulatorError(400, "ProjectQuotaReached", `Team '${team.slug}' has reached its plan limit of ${quota} projects.`);
    }
    const base = slugify(body.projectName);
    let project = await insertProject(tx, { teamId: team.id, slug: base, name: body.projectName });
    for (let attempt = 0; !project && attempt < NAME_ATTEMPTS; attempt++) {
      project = await insertProject(tx, { teamId: team.id, slug: suffixedSlug(base), name: body.projectName });
    }
    if (!project) throw new EmulatorError(500, "InternalServerError", "Could not allocate a project slug.");
    const deployment = body.deploymentType ? await ensureDeployment(tx, project.id, body.deploymentType) : null;
    return { project, deployment, remaining: quota - count - 1 };
  });
  return Response.json({
    projectSlug: result.project.slug,
    projectId: result.project.id,
    teamSlug: team.slug,
    teamId: team.id,
    ...(result.deployment && {
      deploymentName: result.deployment.name,
      prodUrl: deploymentUrl(context, result.deployment.name),
    }),
    projectsRemaining: result.remaining,
  });
}

export async function provisionAndAuthorize(request: Request, context: EmulatorContext): Promise<Response> {
  const team = await requireTeam(request, context);
  const body = await readJson(request, provisionBody);
  if (body.teamSlug === null || body.projectSlug === null) {
    throw new EmulatorError(400, "BadJsonBody", "teamSlug and projectSlug are required with a team token.");
  }
  requireSameTeam(team, body.teamSlug);
  const project = await findProject(context.db, team.id, { slug: body.projectSlug });
  if (!project) throw new EmulatorError(404, "ProjectNotFound", `Project '${body.projectSlug}' does not exist.`);
  const secret = randomSecret();
  const deployment = await context.db.transaction(async (tx) => {
    const found = await ensureDeployment(tx, project.id, body.deploymentType);
    await insertDeployKey(tx, found.name, secret);
    return found;
  });
  return Response.json({
    deploymentName: deployment.name,
    url: deploymentUrl(context, deployment.name),
    // Deployment-scoped: the secret part opens this deployment only, never the team.
    adminKey: formatAdminKey({ teamSlug: team.slug, projectSlug: project.slug, token: secret }),
    deploymentType: deployment.deploymentType,
  });
}

export async function deleteProjectById(request: Request, context: EmulatorContext, projectId: string): Promise<Response> {
  const team = await requireTeam(request, context);
  const id = Number(projectId);
  if (!Number.isSafeInteger(id) || !(await deleteProject(context.db, team.id, id))) {
    throw new EmulatorError(404, "ProjectNotFound", "The requested project does not exist.");
  }
  return new Response(null, { status: 200 });
}
