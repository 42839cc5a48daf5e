import { listEnvVariables, setEnvVariablesWithRetries } from "@/lib/backend";
import { ConflictError } from "@/lib/errors";
import type { Project } from "@/lib/store/projects";
import { getBackendCredentials } from "./credentials";

/** A deployment variable as the dashboard shows it: the value never leaves the server, only its length. */
export interface MaskedEnvVariable {
  name: string;
  valueLength: number;
}

async function deploymentOf(project: Project) {
  const credentials = await getBackendCredentials(project.id);
  if (!credentials) throw new ConflictError("The project has no connected backend.", "backend_not_connected");
  return { deploymentUrl: credentials.deploymentUrl, token: credentials.adminKey };
}

/** GET /api/projects/<id>/env: the deployment's variables by name, values masked. */
export async function listDeploymentEnv(project: Project): Promise<MaskedEnvVariable[]> {
  const variables = await listEnvVariables(await deploymentOf(project));
  return Object.entries(variables)
    .map(([name, value]) => ({ name, valueLength: value.length }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** PUT /api/projects/<id>/env: sets (adds or overwrites) variables through `setEnvVariables`; others stay. */
export async function setDeploymentEnv(project: Project, values: Record<string, string>): Promise<MaskedEnvVariable[]> {
  await setEnvVariablesWithRetries(await deploymentOf(project), values);
  return listDeploymentEnv(project);
}
