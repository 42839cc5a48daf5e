import { z } from "zod";
import type { EmulatorContext } from "./context";
import { PAUSED_ERROR_MESSAGE, badDeployKey, keyOpensDeployment, requireKey, runSystemFunction } from "./deployment";
import { EmulatorError, authorizationCredential, readJson, readQuery } from "./http";
import type { AnalysedModule } from "./modules";
import type { CallResult, FunctionKind, HttpActionResponse, UserIdentity } from "./runtime";
import type { EmulatorDeployment } from "./store";
import { InvalidUserToken, verifyUserToken } from "./user-auth";

/**
 * Calling a deployment's functions, as hosted deployments answer it: the public HTTP API
 * (`/api/query`, `/api/mutation`, `/api/action`, `/api/run/<module>/<export>`) and, through
 * {@link runFunction}, the sync WebSocket. Public functions need no key; internal and system
 * functions need an admin key.
 */

/** HTTP status of a failed function call, with a `{status: "error", errorMessage}` body (convex `STATUS_CODE_UDF_FAILED`). */
const UDF_FAILED = 560;

const SYSTEM_PREFIX = "_system/";

/** Upstream's limit on a call's arguments (convex JSON). */
export const MAX_ARGS_BYTES = 16 * 1024 * 1024;

const UDF_TYPE: Record<FunctionKind, string> = { query: "Query", mutation: "Mutation", action: "Action" };
const KIND_OF: Record<string, FunctionKind> = { Query: "query", Mutation: "mutation", Action: "action" };

/** `messages:list`, `messages.js:list` or `messages` (the default export) as module path and export name. */
function splitPath(path: string): { modulePath: string; exportName: string } {
  const [modulePart, exportName = "default"] = path.split(":");
  return { modulePath: modulePart.replace(/\.js$/, ""), exportName };
}

export interface FunctionRequest {
  path: string;
  /** What the caller asked to run; "any" for `/api/run/…`. */
  kind: FunctionKind | "any";
  /** The arguments object, convex JSON. */
  args: unknown;
  /** The caller sent a key that opens the deployment. */
  admin: boolean;
  identity?: UserIdentity | null;
}

/**
 * Upstream's wording of a missing (or, for non-admins, internal) function: the typed endpoints
 * validate a public path (`crates/udf/src/validation.rs`), `/api/function` any path
 * (`crates/application/src/lib.rs`); `npx convex run` lists the functions after the latter.
 */
function notFound(path: string, kind: FunctionRequest["kind"]): CallResult {
  const shown = path.slice(0, 200);
  return { ok: false, errorMessage: kind === "any" ? `Could not find function for '${shown}'. Did you forget to run \`npx convex dev\`?` : `Could not find public function for '${shown}'.` };
}
/** Runs a function of the deployment's live code (or a system function, for admins). */
export async function runFunction(context: EmulatorContext, deployment: EmulatorDeployment, request: FunctionRequest): Promise<CallResult> {
  const argsBytes = Buffer.byteLength(JSON.stringify(request.args ?? {}));
  if (argsBytes > MAX_ARGS_BYTES) {
    return { ok: false, errorMessage: `Arguments for ${request.path.slice(0, 200)} are too large (${argsBytes} bytes; the limit is ${MAX_ARGS_BYTES} bytes).` };
  }
  // System functions are the dashboard's and the CLI's, which keep working while paused.
  if (deployment.paused && !request.path.startsWith(SYSTEM_PREFIX)) return { ok: false, errorMessage: PAUSED_ERROR_MESSAGE };
  if (request.path.startsWith(SYSTEM_PREFIX)) {
    if (!request.admin) return notFound(request.path, request.kind);
    const result = await runSystemFunction(context, deployment, request.path, [request.args]);
    return result.ok ? result : { ok: false, errorMessage: result.errorMessage };
  }
  const push = await context.runtimes.livePush(context, deployment.name);
  const { modulePath, exportName } = splitPath(request.path);
  const analysed = (push?.analysis[`${modulePath}.js`] as AnalysedModule | undefined)?.functions.find((fn) => fn.name === exportName);
  if (!push || !analysed || (!request.admin && analysed.visibility?.kind !== "public")) return notFound(request.path, request.kind);
  const kind = KIND_OF[analysed.udfType];
  if (request.kind !== "any" && request.kind !== kind) {
    return { ok: false, errorMessage: `Trying to execute ${modulePath}:${exportName} as ${UDF_TYPE[request.kind]}, but it is defined as ${analysed.udfType}.` };
  }
  return context.runtimes.call(context, deployment, push, { kind, udfPath: `${modulePath}:${exportName}`, args: request.args, identity: request.identity });
}

const callBody = z.object({
  path: z.string(),
  format: z.string().optional(),
  // ConvexHttpClient sends `[args]`; the documented HTTP API sends the object.
  args: z.unknown().optional(),
});

const runBody = z.object({ format: z.string().optional(), args: z.unknown().optional() });

/**
 * Who calls: an admin key of this deployment (`Authorization: Convex <key>`; a key that does not
 * open it is refused) or a user token (`Bearer <JWT>`) that the pushed auth providers accept.
 */
async function caller(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<{ admin: boolean; identity: UserIdentity | null }> {
  const key = authorizationCredential(request, "Convex");
  if (key) {
    if (!(await keyOpensDeployment(context, key, deployment))) throw badDeployKey(deployment);
    return { admin: true, identity: null };
  }
  const token = authorizationCredential(request, "Bearer");
  if (!token) return { admin: false, identity: null };
  return { admin: false, identity: await verifiedIdentity(context, deployment, token) };
}

/** The identity of a user token under the live push's auth providers. */
export async function verifiedIdentity(context: EmulatorContext, deployment: EmulatorDeployment, token: string): Promise<UserIdentity> {
  try {
    return await verifyUserToken((await context.runtimes.livePush(context, deployment.name))?.auth ?? [], token);
  } catch (error) {
    if (error instanceof InvalidUserToken) throw new EmulatorError(401, "Unauthenticated", error.message);
    throw error;
  }
}

function argsObject(args: unknown): unknown {
  return (Array.isArray(args) ? args[0] : args) ?? {};
}

/** Browsers call the function API from the app's own origin, as they call hosted deployments. */
const CORS_HEADERS = { "access-control-allow-origin": "*" };

function answer(result: CallResult): Response {
  const logLines = result.logLines ?? [];
  return result.ok
    ? Response.json({ status: "success", value: result.value, logLines }, { headers: CORS_HEADERS })
    : Response.json({ status: "error", errorMessage: result.errorMessage, errorData: result.errorData ?? null, logLines }, { status: UDF_FAILED, headers: CORS_HEADERS });
}

/** `OPTIONS` on the function API: the CORS preflight of a browser's call. */
export async function allowCors(): Promise<Response> {
  return new Response(null, {
    status: 204,
    headers: { ...CORS_HEADERS, "access-control-allow-methods": "POST, OPTIONS", "access-control-allow-headers": "authorization, content-type, convex-client", "access-control-max-age": "86400" },
  });
}

async function call(kind: FunctionKind, request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const who = await caller(request, context, deployment);
  const body = await readJson(request, callBody);
  return answer(await runFunction(context, deployment, { path: body.path, kind, args: argsObject(body.args), ...who }));
}

/** `POST /api/query`. */
export const runQuery = (request: Request, context: EmulatorContext, deployment: EmulatorDeployment) => call("query", request, context, deployment);
/** `POST /api/mutation`. */
export const runMutation = (request: Request, context: EmulatorContext, deployment: EmulatorDeployment) => call("mutation", request, context, deployment);
/** `POST /api/action`. */
export const runAction = (request: Request, context: EmulatorContext, deployment: EmulatorDeployment) => call("action", request, context, deployment);

const functionBody = callBody.extend({ componentPath: z.string().nullish() });

/** `POST /api/function`: any kind of function by its path (`ConvexHttpClient.function`, what `npx convex run` calls). */
export async function runAnyFunction(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const who = await caller(request, context, deployment);
  const body = await readJson(request, functionBody);
  if (body.componentPath) return answer({ ok: false, errorMessage: `Could not find function for '${body.path.slice(0, 200)}': the local deployment has no components.` });
  return answer(await runFunction(context, deployment, { path: body.path, kind: "any", args: argsObject(body.args), ...who }));
}

/** `POST /api/run/<module path>/<export>`: any kind of function, named by its URL. */
export async function runByUrl(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const who = await caller(request, context, deployment);
  const body = await readJson(request, runBody);
  const segments = new URL(request.url).pathname.replace(/^\/api\/run\//, "").split("/").map(decodeURIComponent);
  const exportName = segments.pop() ?? "default";
  return answer(await runFunction(context, deployment, { path: `${segments.join("/")}:${exportName}`, kind: "any", args: argsObject(body.args), ...who }));
}

const HTTP_MODULE = "http.js";

/**
 * A request outside the API paths, for the HTTP actions of `convex/http.ts` (the deployment's site
 * URL is its own URL); null when the live code routes no HTTP actions.
 */
export async function serveHttpAction(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response | null> {
  const push = await context.runtimes.livePush(context, deployment.name);
  if (!(push?.analysis[HTTP_MODULE] as AnalysedModule | undefined)?.httpRoutes) return null;
  const url = new URL(request.url);
  const body = request.method === "GET" || request.method === "HEAD" ? null : Buffer.from(await request.arrayBuffer()).toString("base64");
  // An HTTP action sees the identity of a valid Bearer token; other requests run unauthenticated.
  const token = authorizationCredential(request, "Bearer");
  const identity = token ? await verifyUserToken(push!.auth, token).catch(() => null) : null;
  const result = await context.runtimes.call(context, deployment, push!, {
    kind: "http",
    request: { path: url.pathname + url.search, method: request.method, headers: [...request.headers], body },
    identity,
  });
  if (!result.ok) return new Response(result.errorMessage, { status: 500 });
  const answer = result.value as HttpActionResponse;
  return new Response(request.method === "HEAD" || [204, 304].includes(answer.status) ? null : Buffer.from(answer.body, "base64"), { status: answer.status, headers: answer.headers });
}

/** How long `/api/stream_function_logs` waits for an execution before answering none. */
const LOG_POLL_WAIT_MS = 10_000;

const streamQuery = z.object({ cursor: z.coerce.number().default(0) });

/** `GET /api/stream_function_logs?cursor=<ms>` (admin): the executions after the cursor, long-polled; what `convex dev` and `convex logs` print. */
export async function streamFunctionLogs(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const { cursor } = readQuery(request, streamQuery);
  return Response.json(await context.runtimes.logs.after(deployment.name, cursor, LOG_POLL_WAIT_MS, request.signal));
}
