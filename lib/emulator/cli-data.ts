import { z } from "zod";
import type { EmulatorContext } from "./context";
import { deploymentUrlForPort } from "./listeners";
import type { AnalysedModule } from "./modules";
import { latestExport, listImports, queryImport } from "./snapshot-queries";
import { listDocuments, tableOfDocumentId, type DocumentWrite, type EmulatorDeployment } from "./store";

/**
 * The system queries of the `convex` CLI's data plane, answered from the deployment's stored
 * documents and live push as upstream's system functions answer them
 * (`npm-packages/system-udfs/convex/_system/cli/`): `convex data` (tables, tableData),
 * `convex function-spec` and `convex run`'s list of functions (modules:apiSpec, convexUrl:cloudUrl),
 * and what `convex export` / `convex import` watch (./snapshot-queries).
 */

/** A system query's answer (convex JSON), or the error a failed call reports. */
export type SystemQueryResult = { ok: true; value: unknown } | { ok: false; errorMessage: string };

/** upstream's default validator of a function without one. */
const ANY_VALIDATOR = { type: "any" };

const paginationOpts = z.object({ cursor: z.string().nullable(), numItems: z.number().int().positive() });
const tableDataArgs = z.object({ table: z.string(), order: z.enum(["asc", "desc"]), paginationOpts });

/** The deployment's user tables, sorted: the schema's and those holding documents. */
export async function userTableNames(context: EmulatorContext, deployment: EmulatorDeployment, documents: readonly DocumentWrite[]): Promise<string[]> {
  const names = new Set(documents.map(([id]) => tableOfDocumentId(id)));
  const schema = (await context.runtimes.livePush(context, deployment.name))?.schema as { tables?: { tableName: string }[] } | null;
  for (const table of schema?.tables ?? []) names.add(table.tableName);
  return [...names].filter((name) => !name.startsWith("_")).sort();
}

/** `_system/cli/tables`: the user tables, one page. */
async function tables(context: EmulatorContext, deployment: EmulatorDeployment): Promise<SystemQueryResult> {
  const page = (await userTableNames(context, deployment, await listDocuments(context.db, deployment.name))).map((name) => ({ name }));
  return { ok: true, value: { page, isDone: true, continueCursor: "end" } };
}

/** `_system/cli/tableData`: one page of a table's documents by creation time; the cursor is the offset. */
async function tableData(context: EmulatorContext, deployment: EmulatorDeployment, args: unknown): Promise<SystemQueryResult> {
  const parsed = tableDataArgs.safeParse(args);
  if (!parsed.success) return { ok: false, errorMessage: `ArgumentValidationError: ${parsed.error.issues[0]?.message ?? "invalid arguments"}` };
  const { table, order, paginationOpts: page } = parsed.data;
  const documents = (await listDocuments(context.db, deployment.name))
    .filter(([id]) => tableOfDocumentId(id) === table)
    .map(([, value]) => value as { _creationTime: number })
    .sort((a, b) => (order === "asc" ? a._creationTime - b._creationTime : b._creationTime - a._creationTime));
  const start = Number(page.cursor ?? 0) || 0;
  const end = start + page.numItems;
  return { ok: true, value: { page: documents.slice(start, end), isDone: end >= documents.length, continueCursor: String(Math.min(end, documents.length)) } };
}

/** A function's exported validator, `{type: "any"}` when it has none. */
const validator = (exported: string | null): unknown => (exported ? JSON.parse(exported) : null) ?? ANY_VALIDATOR;

/** `_system/cli/modules:apiSpec`: every function of the live push with its validators, and the HTTP routes. */
async function apiSpec(context: EmulatorContext, deployment: EmulatorDeployment): Promise<SystemQueryResult> {
  const push = await context.runtimes.livePush(context, deployment.name);
  const specs: unknown[] = [];
  for (const [modulePath, module] of Object.entries((push?.analysis ?? {}) as Record<string, AnalysedModule>).sort(([a], [b]) => a.localeCompare(b))) {
    for (const fn of module.functions) {
      specs.push({
        identifier: `${modulePath}:${fn.name}`,
        functionType: fn.udfType,
        visibility: fn.visibility ?? { kind: "public" },
        args: validator(fn.args),
        returns: validator(fn.returns),
      });
    }
    for (const route of module.httpRoutes ?? []) specs.push({ functionType: "HttpAction", method: route.method, path: route.path });
  }
  return { ok: true, value: specs };
}

/** The answer of one of these system queries; null when `path` is none of them. */
export async function runCliDataQuery(context: EmulatorContext, deployment: EmulatorDeployment, path: string, args: unknown): Promise<SystemQueryResult | null> {
  switch (path.replace(/\.js(?=:|$)/, "").replace(/:default$/, "")) {
    case "_system/cli/tables":
      return tables(context, deployment);
    case "_system/cli/tableData":
      return tableData(context, deployment, args);
    case "_system/cli/modules:apiSpec":
      return apiSpec(context, deployment);
    case "_system/cli/exports:getLatest":
      return { ok: true, value: await latestExport(context, deployment) };
    case "_system/cli/queryImport":
      return queryImport(context, deployment, args);
    case "_system/cli/queryImport:list":
      return { ok: true, value: await listImports(context, deployment) };
    case "_system/cli/convexUrl:cloudUrl":
      return { ok: true, value: deployment.port === null ? null : deploymentUrlForPort(deployment.port) };
    default:
      return null;
  }
}
