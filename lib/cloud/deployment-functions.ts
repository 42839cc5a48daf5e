import { ConvexHttpClient } from "convex/browser";
import { makeFunctionReference } from "convex/server";
import { AppError, ConflictError } from "@/lib/errors";
import type { Project } from "@/lib/store/projects";
import { getBackendCredentials } from "./credentials";

export type FunctionKind = "query" | "mutation" | "action";

/** The deployment refused or failed the call (unknown function, bad arguments, the function threw). */
export class FunctionCallError extends AppError {
  constructor(message: string) {
    super(422, "function_failed", message);
  }
}

/** The deployment could not be reached. */
export class DeploymentUnreachableError extends AppError {
  constructor(options: { cause: unknown }) {
    super(503, "deployment_unreachable", "The project's deployment could not be reached; try again.", options);
  }
}

/** A client of the project's deployment with its admin key, which never leaves the server. */
async function adminClientOf(project: Project): Promise<ConvexHttpClient> {
  const credentials = await getBackendCredentials(project.id);
  if (!credentials) throw new ConflictError("The project has no connected backend.", "backend_not_connected");
  const client = new ConvexHttpClient(credentials.deploymentUrl, { logger: false });
  // The client's admin authentication (what the CLI and dashboard use) is left out of its public types.
  (client as unknown as { setAdminAuth(adminKey: string): void }).setAdminAuth(credentials.adminKey);
  return client;
}

async function call(client: ConvexHttpClient, kind: FunctionKind, name: string, args: Record<string, unknown>): Promise<unknown> {
  try {
    if (kind === "query") return await client.query(makeFunctionReference<"query">(name), args);
    if (kind === "mutation") return await client.mutation(makeFunctionReference<"mutation">(name), args);
    return await client.action(makeFunctionReference<"action">(name), args);
  } catch (error) {
    // fetch's own failure is a TypeError; everything else is the deployment's answer.
    if (error instanceof TypeError) throw new DeploymentUnreachableError({ cause: error });
    throw new FunctionCallError(error instanceof Error ? error.message : String(error));
  }
}

/** Runs a function of the project's deployment as admin (e.g. to seed data); answers its result. */
export async function runDeploymentFunction(project: Project, kind: FunctionKind, name: string, args: Record<string, unknown>): Promise<unknown> {
  return call(await adminClientOf(project), kind, name, args);
}

interface Page<T> {
  page: T[];
}

/**
 * The deployment's tables with their newest `limit` documents each, read through the system
 * queries `convex data` uses.
 */
export async function sampleDeploymentTables(project: Project, limit: number): Promise<{ name: string; documents: unknown[] }[]> {
  const client = await adminClientOf(project);
  const firstPage = (numItems: number) => ({ cursor: null, numItems });
  const tables = (await call(client, "query", "_system/cli/tables", { paginationOpts: firstPage(100) })) as Page<{ name: string }>;
  return Promise.all(
    tables.page.map(async ({ name }) => {
      const data = (await call(client, "query", "_system/cli/tableData", { table: name, order: "desc", paginationOpts: firstPage(limit) })) as Page<unknown>;
      return { name, documents: data.page };
    }),
  );
}
