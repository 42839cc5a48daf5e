import fs from "node:fs/promises";
import path from "node:path";
import zlib from "node:zlib";
import { z } from "zod";
import type { EmulatorContext } from "./context";
import { requireKey } from "./deployment";
import { EmulatorError, randomSecret } from "./http";
import { analysePush, moduleHash, pushDirectory, removeOtherPushDirectories, writePushModules, type AnalysedModule, type AnalysisFailure, type PushAnalysis } from "./modules";
import { findPush, finishPush, insertPush, listDocuments, listEnvVars, listPushModules, tableOfDocumentId, type DocumentWrite, type EmulatorDeployment, type PushRecord, type PushedModule } from "./store";

/**
 * The push endpoints the `convex` CLI calls (`npx convex dev` / `npx convex deploy`, CLI 1.48):
 * `get_config_hashes` → `deploy2/evaluate_schema` (and `evaluate_push` for deploy's checks) →
 * `deploy2/start_push` → `deploy2/wait_for_schema` → `deploy2/finish_push` →
 * `deploy2/report_push_completed`. Request and answer shapes follow the CLI's zod schemas
 * (`src/cli/lib/deployApi/*` of the convex package). start_push loads the modules in a worker
 * and records the push; finish_push makes it the deployment's live code.
 */

/** The functions directory a deployment reports before its first push. */
const DEFAULT_FUNCTIONS_DIR = "convex/";
/** The root component, the only one the emulator runs. */
const ROOT = "";
const DEPS_PREFIX = "_deps/";
const AUTH_CONFIG_MODULE = "auth.config.js";
const HTTP_MODULE = "http.js";

const moduleConfig = z.object({
  path: z.string(),
  source: z.string(),
  sourceMap: z.string().nullish(),
  environment: z.enum(["isolate", "node"]),
});

const startPushBody = z.object({
  adminKey: z.string(),
  dryRun: z.boolean(),
  functions: z.string(),
  appDefinition: z.object({
    definition: moduleConfig.nullable(),
    schema: moduleConfig.nullable(),
    changedModules: z.array(moduleConfig),
    unchangedModuleHashes: z.array(z.object({ path: z.string(), environment: z.enum(["isolate", "node"]), sha256: z.string() })),
    udfServerVersion: z.string(),
  }),
  componentDefinitions: z.array(z.unknown()),
  nodeVersion: z.string().nullish(),
});

/** A request body, brotli- or gzip-decoded as its Content-Encoding says (the CLI compresses pushes). */
async function readPushJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  const raw = Buffer.from(await request.arrayBuffer());
  const encoding = request.headers.get("content-encoding")?.toLowerCase();
  let body: unknown;
  try {
    const text = encoding === "br" ? zlib.brotliDecompressSync(raw) : encoding === "gzip" ? zlib.gunzipSync(raw) : raw;
    body = JSON.parse(text.toString("utf8"));
  } catch {
    throw new EmulatorError(400, "BadJsonBody", "The request body must be valid JSON.");
  }
  const result = schema.safeParse(body);
  if (!result.success) throw new EmulatorError(400, "BadJsonBody", `Failed to deserialize the JSON body: ${result.error.issues[0]?.message ?? "invalid"}`);
  return result.data;
}

/** The error the CLI prints when pushed code cannot be loaded (`400 Bad Request: <code>: <message>`). */
function analysisError(failure: AnalysisFailure): EmulatorError {
  switch (failure.kind) {
    case "schema":
      return new EmulatorError(400, "InvalidSchema", `Hit an error while evaluating your schema:\n${failure.message}`);
    case "auth":
      return new EmulatorError(400, "InvalidAuthConfig", `Hit an error while evaluating your auth config:\n${failure.message}`);
    default:
      return new EmulatorError(400, "InvalidModules", `Loading the pushed modules encountered the following\n    error:\nFailed to analyze ${failure.path}: ${failure.message}`);
  }
}

/** Index names the backend keeps for itself. */
const RESERVED_INDEXES = new Set(["by_id", "by_creation_time"]);

interface AnalysedTable {
  tableName: string;
  indexes?: { indexDescriptor: string; fields: string[] }[];
  searchIndexes?: { indexDescriptor: string }[] | null;
  vectorIndexes?: { indexDescriptor: string }[] | null;
}

/** What the backend refuses in a schema that `defineSchema` lets through; null when it is valid. */
function schemaProblem(schema: unknown): string | null {
  for (const table of (schema as { tables?: AnalysedTable[] } | null)?.tables ?? []) {
    if (table.tableName.startsWith("_")) return `Table names can't start with "_": ${table.tableName}`;
    const names = [...(table.indexes ?? []), ...(table.searchIndexes ?? []), ...(table.vectorIndexes ?? [])].map((index) => index.indexDescriptor);
    for (const [position, name] of names.entries()) {
      if (RESERVED_INDEXES.has(name) || name.startsWith("_")) return `Index name ${name} in table ${table.tableName} is reserved.`;
      if (names.indexOf(name) !== position) return `Duplicate index name ${name} in table ${table.tableName}.`;
    }
    for (const index of table.indexes ?? []) {
      if (index.fields.length === 0) return `Index ${index.indexDescriptor} in table ${table.tableName} must have at least one field.`;
    }
  }
  return null;
}

interface DatabaseIndex {
  name: string;
  type: "database";
  fields: string[];
}

/** The database indexes of an analysed schema, named `<table>.<index>` as the CLI prints them. */
function schemaIndexes(schema: unknown): DatabaseIndex[] {
  const tables = (schema as { tables?: AnalysedTable[] } | null)?.tables ?? [];
  return tables.flatMap((table) => (table.indexes ?? []).map((index) => ({ name: `${table.tableName}.${index.indexDescriptor}`, type: "database" as const, fields: index.fields })));
}

function indexDiff(previous: unknown, next: unknown) {
  const key = (index: DatabaseIndex) => `${index.name}(${index.fields.join(",")})`;
  const before = schemaIndexes(previous);
  const after = schemaIndexes(next);
  const beforeKeys = new Set(before.map(key));
  const afterKeys = new Set(after.map(key));
  return { added_indexes: after.filter((index) => !beforeKeys.has(key(index))), removed_indexes: before.filter((index) => !afterKeys.has(key(index))) };
}

/** The live push's modules at the paths and hashes the CLI reports as unchanged. */
async function unchangedModules(context: EmulatorContext, live: PushRecord | null, wanted: { path: string; sha256: string }[]): Promise<PushedModule[]> {
  if (wanted.length === 0) return [];
  const byPath = new Map((live ? await listPushModules(context.db, live.id) : []).map((module) => [module.path, module]));
  return wanted.map((entry) => {
    const found = byPath.get(entry.path);
    if (!found || found.sha256 !== entry.sha256) {
      throw new EmulatorError(400, "ModuleNotFound", `Module ${entry.path.slice(0, 200)} with hash ${entry.sha256.slice(0, 64)} is not on the deployment; push it again.`);
    }
    return found;
  });
}

/** `POST /api/get_config_hashes`: the live push's config and module hashes, so the CLI sends only changed modules. */
export async function getConfigHashes(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const live = await findPush(context.db, deployment.name);
  const modules = live ? await listPushModules(context.db, live.id) : [];
  return Response.json({
    config: { functions: live?.config.functions ?? DEFAULT_FUNCTIONS_DIR, authInfo: live?.auth ?? [] },
    moduleHashes: modules.map((module) => ({ path: module.path, hash: module.sha256, environment: module.environment })),
    nodeVersion: live?.config.nodeVersion ?? null,
  });
}

/** The root component's exports as the CLI's `checkedComponent` spells them: a branch per module, a leaf per public or internal function. */
function componentExports(modules: Record<string, AnalysedModule>) {
  return Object.fromEntries(
    Object.entries(modules)
      .filter(([, module]) => module.functions.length > 0)
      .map(([modulePath, module]) => [
        modulePath.replace(/\.js$/, ""),
        {
          type: "branch",
          children: Object.fromEntries(
            module.functions.map((fn) => [fn.name, { type: "leaf", resource: { type: "function", path: { component: ROOT, udfPath: `${modulePath}:${fn.name}` } } }]),
          ),
        },
      ]),
  );
}

/** A push request's code, loaded and analysed (start_push, evaluate_push, evaluate_schema). */
interface EvaluatedPush {
  body: z.output<typeof startPushBody>;
  pushId: string;
  live: PushRecord | null;
  /** Every module of the push, the schema included. */
  stored: PushedModule[];
  analysis: PushAnalysis;
  variables: { name: string; value: string }[];
  documents: DocumentWrite[];
}

/**
 * Loads the code of a push request in a worker and checks it: every module, or only the schema
 * (`schemaOnly`, evaluate_schema). Only a push that will be kept (`keep`, not a dry run) keeps its
 * module directory.
 */
async function evaluatePushRequest(request: Request, context: EmulatorContext, deployment: EmulatorDeployment, { keep, schemaOnly }: { keep: boolean; schemaOnly: boolean }): Promise<EvaluatedPush> {
  await requireKey(request, context, deployment);
  const body = await readPushJson(request, startPushBody);
  if (body.componentDefinitions.length > 0) throw new EmulatorError(400, "ComponentsNotSupported", "Components (convex.config.ts) are not supported by the built-in deployment yet.");
  const { appDefinition } = body;
  const live = await findPush(context.db, deployment.name);
  const pushed = (module: z.output<typeof moduleConfig>): PushedModule => ({ ...module, sourceMap: module.sourceMap ?? undefined, sha256: moduleHash({ source: module.source, sourceMap: module.sourceMap ?? undefined }) });
  const modules = [...appDefinition.changedModules.map(pushed), ...(await unchangedModules(context, live, appDefinition.unchangedModuleHashes))];
  const schemaModule = appDefinition.schema ? pushed(appDefinition.schema) : null;
  const stored = schemaModule ? [...modules, schemaModule] : modules;

  const pushId = randomSecret(12);
  const dir = await writePushModules(pushDirectory(context.modulesDir, deployment.name, pushId), stored);
  const variables = await listEnvVars(context.db, deployment.name);
  const documents = schemaModule ? await listDocuments(context.db, deployment.name) : [];
  const origin = new URL(request.url).origin;
  const analysed = await analysePush({
    dir,
    modulePaths: schemaOnly ? [] : modules.map((module) => module.path).filter((modulePath) => !modulePath.startsWith(DEPS_PREFIX)),
    schemaPath: schemaModule?.path ?? null,
    authPath: !schemaOnly && modules.some((module) => module.path === AUTH_CONFIG_MODULE) ? AUTH_CONFIG_MODULE : null,
    env: { ...Object.fromEntries(variables.map((variable) => [variable.name, variable.value])), CONVEX_CLOUD_URL: origin, CONVEX_SITE_URL: origin },
    documents,
  }, context.analyseTimeoutMs);
  const problem = analysed.ok ? schemaProblem(analysed.value.schema) : null;
  if (!analysed.ok || problem || !keep || body.dryRun) await fs.rm(dir, { recursive: true, force: true });
  if (!analysed.ok) throw analysisError(analysed);
  if (problem) throw analysisError({ ok: false, kind: "schema", path: schemaModule!.path, message: problem });
  return { body, pushId, live, stored, analysis: analysed.value, variables, documents };
}

/** The answer of start_push (and of evaluate_push, which reads its `schemaChange`). */
function startPushAnswer({ body, pushId, live, analysis, variables }: EvaluatedPush): Response {
  return Response.json({
    environmentVariables: Object.fromEntries(variables.map((variable) => [variable.name, variable.value])),
    externalDepsId: null,
    componentDefinitionPackages: {},
    appAuth: analysis.auth,
    analysis: {
      [ROOT]: {
        definition: { path: ROOT, definitionType: { type: "app" }, childComponents: [], httpMounts: {}, exports: { type: "branch", branch: [] } },
        schema: analysis.schema,
        functions: analysis.modules,
        udfConfig: { serverVersion: body.appDefinition.udfServerVersion, importPhaseRngSeed: null, importPhaseUnixTimestamp: null },
      },
    },
    app: {
      definitionPath: ROOT,
      componentPath: ROOT,
      args: {},
      childComponents: {},
      httpRoutes: { httpModuleRoutes: analysis.modules[HTTP_MODULE]?.httpRoutes ?? null, mounts: [] },
      exports: componentExports(analysis.modules),
    },
    schemaChange: { allocatedComponentIds: {}, schemaIds: { [ROOT]: pushId }, indexDiffs: { [ROOT]: indexDiff(live?.schema ?? null, analysis.schema) } },
  });
}

/** `POST /api/deploy2/start_push`: loads the pushed modules, records the push (unless a dry run) and answers the analysis. */
export async function startPush(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const evaluated = await evaluatePushRequest(request, context, deployment, { keep: true, schemaOnly: false });
  const { body, pushId, analysis, stored } = evaluated;
  if (!body.dryRun) {
    const record: PushRecord = {
      id: pushId,
      deploymentName: deployment.name,
      config: { functions: body.functions, ...(body.nodeVersion ? { nodeVersion: body.nodeVersion } : {}) },
      analysis: analysis.modules,
      schema: analysis.schema,
      auth: analysis.auth,
      schemaError: analysis.documentsProblem,
    };
    await context.db.transaction((tx) => insertPush(tx, record, stored));
  }
  return startPushAnswer(evaluated);
}

/** `POST /api/deploy2/evaluate_push` (`convex deploy`'s checks): start_push's answer, nothing kept. */
export async function evaluatePush(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  return startPushAnswer(await evaluatePushRequest(request, context, deployment, { keep: false, schemaOnly: false }));
}

/**
 * `POST /api/deploy2/evaluate_schema` (`convex deploy`'s checks): per table its documents, per index
 * what the push does to it. Documents are checked at start_push, so every table is walked.
 */
export async function evaluateSchema(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const { live, analysis, documents } = await evaluatePushRequest(request, context, deployment, { keep: false, schemaOnly: true });
  const documentsOf = new Map<string, { numDocs: number; sizeBytes: number }>();
  for (const [id, value] of documents) {
    const table = documentsOf.get(tableOfDocumentId(id)) ?? { numDocs: 0, sizeBytes: 0 };
    documentsOf.set(tableOfDocumentId(id), { numDocs: table.numDocs + 1, sizeBytes: table.sizeBytes + JSON.stringify(value).length });
  }
  const counts = (table: string) => documentsOf.get(table) ?? { numDocs: 0, sizeBytes: 0 };
  const schema = analysis.schema as { tables?: AnalysedTable[]; schemaValidation?: boolean } | null;
  const { added_indexes: added, removed_indexes: removed } = indexDiff(live?.schema ?? null, analysis.schema);
  const addedNames = new Set(added.map((index) => index.name));
  const tableOfIndex = (index: DatabaseIndex) => index.name.split(".")[0];
  const indexes = [
    ...schemaIndexes(analysis.schema).map((index) => {
      const { numDocs } = counts(tableOfIndex(index));
      const change = addedNames.has(index.name) ? "added" : "identical";
      return { ...index, change, needsBackfill: change === "added" && numDocs > 0, numDocs };
    }),
    ...removed.map((index) => ({ ...index, change: "dropped", needsBackfill: false, numDocs: counts(tableOfIndex(index)).numDocs })),
  ];
  return Response.json({
    componentSchemaEvaluations: {
      [ROOT]: {
        definitionPath: ROOT,
        schemaValidation: schema?.schemaValidation ?? false,
        tables: (schema?.tables ?? []).map((table) => ({ name: table.tableName, outcome: "mustWalk", ...counts(table.tableName) })),
        indexes,
        discardedStagedValidators: [],
      },
    },
    newComponentDefinitions: [],
  });
}

/** What wait_for_schema and finish_push read of the start_push answer the CLI echoes: the push's id. */
const echoedPush = z.object({ schemaChange: z.object({ schemaIds: z.record(z.string(), z.string()) }) });

const waitForSchemaBody = z.object({ schemaChange: echoedPush.shape.schemaChange });

/**
 * `POST /api/deploy2/wait_for_schema`: indexes need no backfill here and the stored documents were
 * checked against the schema at start_push, so the answer is final at once: complete, or failed
 * with the first document the schema refuses.
 */
export async function waitForSchema(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const body = await readPushJson(request, waitForSchemaBody);
  const pushId = body.schemaChange.schemaIds[ROOT];
  const started = pushId ? await findPush(context.db, deployment.name, pushId) : null;
  if (started?.schemaError) return Response.json({ type: "failed", error: started.schemaError.error, componentPath: ROOT, tableName: started.schemaError.tableName });
  return Response.json({ type: "complete" });
}

const finishPushBody = z.object({ dryRun: z.boolean(), startPush: echoedPush });

/** `POST /api/deploy2/finish_push`: the started push becomes the live code; answers what changed. */
export async function finishPushRequest(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const body = await readPushJson(request, finishPushBody);
  const pushId = body.startPush.schemaChange.schemaIds[ROOT];
  const started = pushId ? await findPush(context.db, deployment.name, pushId) : null;
  const live = await findPush(context.db, deployment.name);
  if (!body.dryRun) {
    if (started?.schemaError) throw new EmulatorError(400, "SchemaValidationFailed", started.schemaError.error);
    const finished = started !== null && (await context.db.transaction((tx) => finishPush(tx, deployment.name, started.id)));
    if (!finished) throw new EmulatorError(400, "RaceDetected", "The push was replaced by another push before it finished; push again.");
    await context.runtimes.replaceCode(deployment.name);
    await removeOtherPushDirectories(context.modulesDir, deployment.name, started.id);
  }
  const before = Object.keys(live?.analysis ?? {});
  const after = Object.keys(started?.analysis ?? {});
  const authKey = (provider: unknown) => JSON.stringify(provider);
  const authBefore = (live?.auth ?? []).map(authKey);
  const authAfter = (started?.auth ?? []).map(authKey);
  return Response.json({
    authDiff: { added: authAfter.filter((entry) => !authBefore.includes(entry)), removed: authBefore.filter((entry) => !authAfter.includes(entry)) },
    definitionDiffs: {},
    componentDiffs: {
      [ROOT]: {
        diffType: { type: live ? "modify" : "create" },
        moduleDiff: { added: after.filter((entry) => !before.includes(entry)), removed: before.filter((entry) => !after.includes(entry)) },
        udfConfigDiff: null,
        cronDiff: { added: [], updated: [], deleted: [] },
        indexDiff: indexDiff(live?.schema ?? null, started?.schema ?? null),
        schemaDiff: null,
      },
    },
  });
}

/** `POST /api/deploy2/report_push_completed`: the CLI's timing spans; nothing to keep. */
export async function reportPushCompleted(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  return Response.json({});
}

/** Where pushed modules are written, below DATA_DIR. */
export const PUSH_MODULES_DIR = path.join("emulator", "pushes");
