import { z } from "zod";
import type { EmulatorContext } from "./context";
import { badDeployKey, deploymentNameOfKey, keyOpensDeployment } from "./deployment";
import { EmulatorError, readJson } from "./http";
import { findDeployment, type EmulatorDeployment } from "./store";

/**
 * What the `convex` CLI asks the provision host when `CONVEX_DEPLOY_KEY` holds a deployment's
 * key (convex/dist/cli/lib/deploymentSelection.js): `POST /api/deployment/url_for_key` (the
 * deployment's URL) and `POST /api/deployment/team_and_project_for_key`. With
 * `CONVEX_PROVISION_HOST` set to the emulator's mount, `npx convex dev --once`, `deploy`, `run`…
 * find their local deployment from the key alone.
 */

const keyBody = z.object({ deployKey: z.string().min(1).max(2000) });

/** The deployment the posted key opens; a key that opens none is refused without being echoed. */
async function deploymentOfKey(request: Request, context: EmulatorContext): Promise<EmulatorDeployment> {
  const { deployKey } = await readJson(request, keyBody);
  const name = deploymentNameOfKey(deployKey);
  const deployment = name ? await findDeployment(context.db, { name }) : null;
  if (!deployment) throw new EmulatorError(400, "InvalidDeployKey", "The deploy key does not name a deployment of this installation: deploy keys look like `dev:<deployment>|<secret>`.");
  if (!(await keyOpensDeployment(context, deployKey, deployment))) throw badDeployKey(deployment);
  return deployment;
}

/** `POST /api/deployment/url_for_key`: the deployment's URL, a JSON string. */
export async function urlForKey(request: Request, context: EmulatorContext): Promise<Response> {
  const deployment = await deploymentOfKey(request, context);
  return Response.json(await context.listeners.urlOf(context.db, deployment));
}

/** `POST /api/deployment/team_and_project_for_key`: the slugs the CLI shows and stores. */
export async function teamAndProjectForKey(request: Request, context: EmulatorContext): Promise<Response> {
  const deployment = await deploymentOfKey(request, context);
  return Response.json({
    team: deployment.teamSlug,
    project: deployment.projectSlug,
    teamId: deployment.teamId,
    projectId: deployment.projectId,
    reference: deployment.name,
    // The emulator gives a project one deployment of each type: it is the default one.
    isDefault: true,
  });
}
