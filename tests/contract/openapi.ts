import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import type { ZodType } from "zod";
import type { EmulatorExchange } from "@/lib/emulator";
import { platformDocument, type OpenApiDocument } from "./platform-types";

/**
 * Contract check of the emulator against Convex's management and deployment APIs, as the installed
 * `@convex-dev/platform` declares them (./platform-types), with ajv driving their schemas: every
 * exchange of a test's emulator is validated, and a path the APIs do not describe fails unless it is
 * listed in {@link OUTSIDE_DOCUMENTS}. The push API, which no OpenAPI document describes, is
 * checked against the zod schemas the installed `convex` CLI parses its answers with.
 */

type Api = EmulatorExchange["api"];

const documents: Record<Api, OpenApiDocument> = { management: platformDocument("management"), deployment: platformDocument("deployment") };

const ajv = new Ajv2020({ strict: false, allErrors: true });
for (const api of Object.keys(documents) as Api[]) ajv.addSchema(documents[api], api);

const DEPLOY_API = path.join(path.dirname(createRequire(import.meta.url).resolve("convex/package.json")), "dist", "esm", "cli", "lib", "deployApi");
/** One of the CLI's push API modules (not among the package's exports, hence by file). */
const deployApiModule = (name: string): Promise<Record<string, ZodType>> => import(pathToFileURL(path.join(DEPLOY_API, `${name}.js`)).href);
const [startPush, evaluateSchema, finishPush] = await Promise.all(["startPush", "evaluateSchema", "finishPush"].map(deployApiModule));

/**
 * The push endpoints with the CLI's schemas of what it sends and parses. Requests are checked when
 * their recorded body is JSON: the CLI brotli-compresses the ones it pushes code with, which only
 * the emulator's own decoding reads.
 */
const PUSH_SCHEMAS: Record<string, { request?: ZodType; response: ZodType }> = {
  "/api/deploy2/start_push": { request: startPush.startPushRequest, response: startPush.startPushResponse },
  "/api/deploy2/evaluate_push": { request: startPush.startPushRequest, response: startPush.evaluatePushResponse },
  "/api/deploy2/evaluate_schema": { request: startPush.startPushRequest, response: evaluateSchema.evaluateSchemaResponse },
  "/api/deploy2/wait_for_schema": { response: startPush.schemaStatus },
  "/api/deploy2/finish_push": { response: finishPush.finishPushDiff },
};

/** Where a served path lives in its document: the mount prefix of each API. */
const DOCUMENT_PREFIX: Record<Api, RegExp> = { management: /^\/v1(?=\/)/, deployment: /^\/api\/v1(?=\/)/ };

/** Unversioned deployment paths the `convex` CLI calls; they answer exactly as their v1 twin. */
const DEPLOYMENT_ALIASES: Record<string, string> = {
  "/api/update_environment_variables": "/update_environment_variables",
  "/api/list_environment_variables": "/list_environment_variables",
};

/** Served on purpose although no OpenAPI document describes them. */
export const OUTSIDE_DOCUMENTS: { api: Api; pattern: RegExp; why: string }[] = [
  { api: "management", pattern: /^\/oauth\/token$/, why: "standard OAuth 2.0 token endpoint" },
  { api: "management", pattern: /^\/dashboard\/oauth\/authorize\/team$/, why: "the dashboard's OAuth consent page" },
  { api: "management", pattern: /^\/_admin\//, why: "the emulator's own fault injection" },
  { api: "deployment", pattern: /^\/api\/(?:query|mutation|action|function|run\/.+)$/, why: "the public function API (ConvexHttpClient, the CLI's `npx convex env get`)" },
  { api: "deployment", pattern: /^\/(?!api\/)/, why: "the HTTP actions of the pushed `convex/http.ts` (the deployment's site URL)" },
  { api: "deployment", pattern: /^\/api\/(?:get_config_hashes|deploy2\/report_push_completed)$/, why: "the CLI's push steps that no schema of the CLI describes" },
  { api: "deployment", pattern: /^\/api\/stream_function_logs$/, why: "the CLI's function log stream (`npx convex dev`, `convex logs`)" },
  { api: "deployment", pattern: /^\/api\/storage\/[^/]+$/, why: "file storage: upload URLs of `ctx.storage.generateUploadUrl()` and file URLs of `getUrl`" },
  { api: "deployment", pattern: /^\/api\/(?:export\/(?:request\/zip|zip\/[^/]+)|import\/(?:start_upload|upload_part|finish_upload)|perform_import)$/, why: "snapshot export and import of `npx convex export` / `npx convex import`" },
  { api: "management", pattern: /^\/api\/deployment\/(?:url_for_key|team_and_project_for_key)$/, why: "the CLI's lookup of the deployment a `CONVEX_DEPLOY_KEY` names" },
];

const pointer = (token: string) => encodeURIComponent(token.replace(/~/g, "~0").replace(/\//g, "~1"));
const validators = new Map<string, ValidateFunction>();

/** A validator for the schema at this JSON pointer of a document. */
function validatorAt(api: Api, tokens: string[]): ValidateFunction {
  const ref = `${api}#/${tokens.map(pointer).join("/")}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

function templateRegex(template: string): RegExp {
  return new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "([^/]+)")}$`);
}

/** Parameters arrive as text: valid as the text itself or as the JSON value it spells (numbers, booleans). */
function validParameter(validate: ValidateFunction, raw: string): boolean {
  if (validate(raw)) return true;
  try {
    return validate(JSON.parse(raw));
  } catch {
    return false;
  }
}

function describeErrors(validate: ValidateFunction): string {
  return ajv.errorsText(validate.errors, { separator: "; " });
}

/** The real error shape of both APIs: `{code, message}`. */
function checkErrorBody(exchange: EmulatorExchange): string[] {
  try {
    const body = JSON.parse(exchange.responseBody) as Record<string, unknown>;
    if (typeof body.code === "string" && typeof body.message === "string" && Object.keys(body).length === 2) return [];
  } catch {
    // reported below
  }
  return [`${exchange.status} answer is not {code, message}: ${exchange.responseBody.slice(0, 200)}`];
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function zodProblems(schema: ZodType, value: unknown, what: string): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${what}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
}

/** Problems of one push exchange against the CLI's schemas. */
function checkPushExchange(exchange: EmulatorExchange, schemas: (typeof PUSH_SCHEMAS)[string]): string[] {
  if (exchange.status >= 400) return checkErrorBody(exchange);
  const problems: string[] = [];
  const request = parseJson(exchange.requestBody);
  if (schemas.request && request) problems.push(...zodProblems(schemas.request, request.value, "request body"));
  const response = parseJson(exchange.responseBody);
  if (exchange.status !== 200) problems.push(`status ${exchange.status} is not what the CLI expects`);
  else if (!response) problems.push("response is not JSON");
  else problems.push(...zodProblems(schemas.response, response.value, "response body"));
  return problems;
}

/** Where an exchange sits in its API's document: the path template and operation, when documented. */
function documentedOperation({ api, method, path: served }: EmulatorExchange) {
  const document = documents[api];
  const documentPath = api === "deployment" && DEPLOYMENT_ALIASES[served] ? DEPLOYMENT_ALIASES[served] : served.replace(DOCUMENT_PREFIX[api], "");
  const template = documentPath !== served ? Object.keys(document.paths).find((candidate) => templateRegex(candidate).test(documentPath)) : undefined;
  const operation = template ? document.paths[template][method.toLowerCase()] : undefined;
  return { documentPath, template, operation };
}

/** One operation of a document, named as `management GET /projects/{project_id}`. */
const operationName = (api: Api, method: string, template: string) => `${api} ${method.toUpperCase()} ${template}`;

/** Every operation the installed `@convex-dev/platform` declares, in both APIs. */
export function documentedOperations(): string[] {
  return (Object.keys(documents) as Api[]).flatMap((api) =>
    Object.entries(documents[api].paths).flatMap(([template, methods]) => Object.keys(methods).map((method) => operationName(api, method, template))),
  );
}

/** Problems of one exchange against the documents; empty when it conforms. */
export function checkExchange(exchange: EmulatorExchange): string[] {
  const { api, method, path: served } = exchange;
  const label = `${api} ${method} ${served}`;
  const push = api === "deployment" && method === "POST" ? PUSH_SCHEMAS[served] : undefined;
  if (push) return checkPushExchange(exchange, push).map((problem) => `${label}: ${problem}`);
  const { documentPath, template, operation } = documentedOperation(exchange);
  const failed = exchange.status >= 400;
  if (!operation) {
    if (OUTSIDE_DOCUMENTS.some((entry) => entry.api === api && entry.pattern.test(served))) return [];
    // The emulator refusing an unknown path or method is right; serving one is not.
    if (exchange.status === 404 || exchange.status === 405) return checkErrorBody(exchange);
    return [`${label}: not in the ${api} OpenAPI document (answered ${exchange.status})`];
  }
  if (failed) return checkErrorBody(exchange).map((problem) => `${label}: ${problem}`);

  const problems: string[] = [];
  const base = ["paths", template!, method.toLowerCase()];
  const values = templateRegex(template!).exec(documentPath)!.slice(1).map(decodeURIComponent);
  const pathNames = [...template!.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
  const parameters = operation.parameters;
  parameters.forEach((parameter, index) => {
    const raw = parameter.in === "path" ? values[pathNames.indexOf(parameter.name)] : exchange.query.get(parameter.name);
    if (raw === null || raw === undefined) {
      if (parameter.required) problems.push(`${label}: missing ${parameter.in} parameter ${parameter.name}`);
      return;
    }
        const validate = validatorAt(api, [...base, "parameters", String(index), "schema"]);
    if (!validParameter(validate, raw)) problems.push(`${label}: ${parameter.in} parameter ${parameter.name}=${raw}: ${describeErrors(validate)}`);
  });
  for (const name of exchange.query.keys()) {
    if (!parameters.some((parameter) => parameter.in === "query" && parameter.name === name)) problems.push(`${label}: undocumented query parameter ${name}`);
  }

  const requestJson = operation.requestBody?.content["application/json"];
  if (requestJson) {
    if (exchange.requestBody) {
      const validate = validatorAt(api, [...base, "requestBody", "content", "application/json", "schema"]);
      if (!validate(JSON.parse(exchange.requestBody))) problems.push(`${label}: request body: ${describeErrors(validate)}`);
    } else if (operation.requestBody?.required) {
      problems.push(`${label}: request body missing`);
    }
  } else if (exchange.requestBody) {
    problems.push(`${label}: request body sent to an operation that takes none`);
  }

  const response = operation.responses[String(exchange.status)];
  if (!response) return [...problems, `${label}: status ${exchange.status} is not documented`];
  if (response.content?.["application/json"]) {
    const validate = validatorAt(api, [...base, "responses", String(exchange.status), "content", "application/json", "schema"]);
    let body: unknown;
    try {
      body = JSON.parse(exchange.responseBody);
    } catch {
      return [...problems, `${label}: response is not JSON`];
    }
    if (!validate(body)) problems.push(`${label}: response body: ${describeErrors(validate)}`);
  } else if (exchange.responseBody) {
    problems.push(`${label}: response has a body the document does not describe`);
  }
  return problems;
}

/**
 * Collects an emulator's exchanges (pass `onExchange` to it) and checks them all in `verify()`,
 * so compiling the schemas never delays an answer.
 */
export function contractRecorder() {
  const exchanges: EmulatorExchange[] = [];
  return {
    onExchange(exchange: EmulatorExchange): void {
      exchanges.push(exchange);
    },
    /** The documented operations exchanged so far, with the statuses they answered. */
    operations(): Map<string, number[]> {
      const seen = new Map<string, number[]>();
      for (const exchange of exchanges) {
        const { template, operation } = documentedOperation(exchange);
        if (!template || !operation) continue;
        const name = operationName(exchange.api, exchange.method, template);
        seen.set(name, [...(seen.get(name) ?? []), exchange.status]);
      }
      return seen;
    },
    /** Throws when any exchange so far broke the contract. */
    verify(): void {
      const problems = new Set(exchanges.flatMap(checkExchange));
      if (problems.size > 0) throw new Error(`The emulator broke the OpenAPI contract:\n${[...problems].join("\n")}`);
    },
  };
}
