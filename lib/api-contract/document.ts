import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { z } from "zod";
import * as s from "./schemas";

type Method = "get" | "post" | "put" | "patch" | "delete";

/** One operation of our /api. Paths use OpenAPI templates (`/api/projects/{id}`). */
interface ApiRoute {
  summary: string;
  /** The JSON body of the success answer; null when it is not JSON (a stream). */
  ok: z.ZodType | null;
  /** The success status, or several that answer alike. @defaultValue 200 */
  status?: number | number[];
  query?: z.ZodObject;
  /** A JSON request body. */
  body?: z.ZodType;
  /** A request body of another media type (multipart upload, pusher-js's form). */
  form?: { mediaType: string; schema: z.ZodType };
  /** A success status answered without a body (a JSON-RPC notification's 202). */
  empty?: number;
  /** The body of every other status. @defaultValue the error body */
  failure?: z.ZodType;
  /** A public route: no session or token needed. */
  open?: boolean;
  /** The success answer's media type when `ok` is null; several when the `accept` header chooses. */
  stream?: string | string[];
  /** The body of a negotiated JSON answer (a `stream` media type ending in `json`). */
  negotiatedJson?: z.ZodType;
}

// Adding a route to the document is one entry here.
const API_ROUTES: [Method, string, ApiRoute][] = [
  ["get", "/api/health", { summary: "Service health and the configured drivers", ok: s.healthResponse, open: true }],
  ["get", "/api/projects", { summary: "The caller's projects", ok: s.projectListResponse }],
  ["post", "/api/projects", { summary: "Create a project", ok: s.projectResponse, status: 201, body: s.createProjectBody }],
  ["get", "/api/projects/{id}", { summary: "A project", ok: s.projectResponse }],
  ["patch", "/api/projects/{id}", { summary: "Rename a project", ok: s.projectResponse, body: s.renameProjectBody }],
  ["delete", "/api/projects/{id}", { summary: "Delete a project with its sandbox, blobs and managed backend project (202: a fault stopped it part-way; the job finishes it)", ok: s.successBody.or(s.jobResponse), status: [200, 202] }],
  ["get", "/api/projects/{id}/system-prompt", { summary: "The assistant's system prompt for the project (spec 1.6)", ok: s.systemPromptResponse }],
  ["get", "/api/projects/{id}/env", { summary: "The deployment's environment variables (values masked)", ok: s.envVariablesResponse }],
  ["put", "/api/projects/{id}/env", { summary: "Set deployment environment variables", ok: s.envVariablesResponse, body: s.setEnvVariablesBody }],
  ["post", "/api/projects/{id}/sandbox/restart", { summary: "Restart the project's sandbox and restore it", ok: s.sandboxRestartResponse }],
  ["get", "/api/projects/{id}/repository", { summary: "The app repository outside the sandbox: when it was last mirrored, the last failure, what a rebuild restored", ok: s.repositoryResponse }],
  ["get", "/api/projects/{id}/errors", { summary: "The project's stored error notifications, oldest first", ok: s.errorHistoryResponse }],
  ["post", "/api/projects/{id}/check", { summary: "Wait until the backend dev server pushed the files as they are now (or failed), then answer whether it pushed and the backend's unresolved errors (504 check_timeout after CHECK_TIMEOUT_MS)", ok: s.checkResponse }],
  ["get", "/api/projects/{id}/errors/stream", { summary: "Server-Sent Events of error notifications", ok: null, stream: "text/event-stream" }],
  ["post", "/api/projects/{id}/screenshots", { summary: "Queue screenshots of the preview (mobile and desktop); the job's result has their URLs", ok: s.jobResponse, status: 202 }],
  ["post", "/api/projects/{id}/assets/reconcile", { summary: "Reconcile the project's asset blobs", ok: s.assetReconcileResponse, body: s.assetReconcileBody }],
  ["post", "/api/projects/{id}/bundles", { summary: "Queue a build and upload of the static iOS and Android bundles (or the platforms asked for); the job's result is the bundles", ok: s.jobResponse, status: 202, body: s.bundleBody }],
  ["get", "/api/projects/{id}/bundles", { summary: "The uploaded bundles, newest first, and what the update URL serves", ok: s.bundleListResponse }],
  ["post", "/api/projects/{id}/bundles/live", { summary: "Promote a bundle, or roll back to an earlier one or to the embedded update", ok: s.releaseResponse, body: s.releaseBody }],
  [
    "get",
    "/api/projects/{id}/updates",
    {
      summary: "The Expo Updates protocol v1 endpoint an app's updates.url names (multipart, or the manifest alone as JSON; 406 when accept allows neither)",
      ok: null,
      stream: ["multipart/mixed", "application/expo+json", "application/json"],
      negotiatedJson: s.expoUpdatesManifest,
      open: true,
    },
  ],
  ["get", "/api/projects/{id}/updates/certificate", { summary: "Download the code-signing certificate", ok: null, stream: "application/x-pem-file" }],
  ["post", "/api/projects/{id}/updates/certificate", { summary: "Turn on code signing: create the key (201) or answer the existing certificate (200)", ok: null, stream: "application/x-pem-file", status: [201, 200] }],
  ["get", "/api/projects/{id}/jobs/{jobId}", { summary: "A background job of the project: its state, then its result or error", ok: s.jobResponse }],
  ["post", "/api/projects/{id}/bundles/cleanup", { summary: "Delete old bundle commits", ok: s.bundleCleanupResponse, body: s.bundleCleanupBody }],
  ["get", "/api/assets", { summary: "The project's asset manifest entries", ok: s.assetListResponse, query: s.projectIdQuery }],
  ["post", "/api/assets/upload", { summary: "Upload a project asset", ok: s.assetUploadResponse, form: { mediaType: "multipart/form-data", schema: s.assetUploadForm } }],
  ["delete", "/api/assets/delete", { summary: "Delete a project asset", ok: s.successBody, body: s.deleteAssetBody }],
  ["post", "/api/upload-image", { summary: "Upload a chat image", ok: s.chatImageResponse, form: { mediaType: "multipart/form-data", schema: s.chatImageForm } }],
  ["post", "/api/cloud/enable", { summary: "Enable the managed cloud backend (provision and wire the sandbox)", ok: s.enableResponse, body: s.projectIdBody }],
  ["post", "/api/backend/managed/connect", { summary: "Provision a managed backend without touching the sandbox", ok: s.managedConnectResponse, body: s.projectIdBody }],
  ["post", "/api/backend/managed/disconnect", { summary: "Disconnect the backend", ok: s.successBody, body: s.disconnectBody }],
  ["post", "/api/backend/dev/start", { summary: "Start the backend dev server", ok: s.backendDevStartResponse, body: s.projectIdBody }],
  ["get", "/api/backend/status", { summary: "Backend state, dev server, its latest push and missing sandbox wiring", ok: s.backendStatusResponse, query: s.projectIdQuery }],
  ["post", "/api/realtime/auth", { summary: "Authorize a private Pusher channel", ok: s.channelAuthorizationResponse, form: { mediaType: "application/x-www-form-urlencoded", schema: s.channelAuthorizationForm } }],
  ["get", "/api/toolchain", { summary: "The app toolchain's state", ok: s.toolchainResponse }],
  ["post", "/api/toolchain", { summary: "(Re)start preparing the app toolchain", ok: s.toolchainResponse, status: 202 }],
  [
    "post",
    "/api/mcp",
    {
      summary: "The builder's tools as a Model Context Protocol server (Streamable HTTP, stateless, JSON answers): list_projects, enable_backend, write_file, read_file, check, run_function, table_sample",
      ok: s.jsonRpcMessages,
      body: s.jsonRpcMessages,
      empty: 202,
      failure: s.errorBody.or(s.jsonRpcMessages),
    },
  ],
  ["get", "/api/openapi.json", { summary: "This document", ok: s.openApiDocumentResponse, open: true }],
  ["get", "/api/docs", { summary: "This document as a page", ok: null, stream: "text/html", open: true }],
];

const pathParams = (path: string) => (path.includes("{jobId}") ? s.projectJobParams : path.includes("{id}") ? s.projectIdParams : undefined);

function toRouteConfig(method: Method, path: string, route: ApiRoute): RouteConfig {
  const success = route.ok
    ? { description: route.summary, content: { "application/json": { schema: route.ok } } }
    : {
        description: route.summary,
        content: Object.fromEntries(
          [route.stream ?? "application/octet-stream"].flat().map((mediaType) => [
            mediaType,
            { schema: route.negotiatedJson && mediaType.endsWith("json") ? route.negotiatedJson : { type: "string" as const } },
          ]),
        ),
      };
  const body = route.body ? { content: { "application/json": { schema: route.body } } } : route.form && { content: { [route.form.mediaType]: { schema: route.form.schema } } };
  return {
    method,
    path,
    summary: route.summary,
    security: route.open ? [] : undefined,
    request: { params: pathParams(path), query: route.query, ...(body && { body }) },
    responses: {
      ...Object.fromEntries([route.status ?? 200].flat().map((status) => [status, success])),
      ...(route.empty && { [route.empty]: { description: `${route.summary} (no body)` } }),
      default: { description: "An error", content: { "application/json": { schema: route.failure ?? s.errorBody } } },
    },
  };
}

let document: ReturnType<OpenApiGeneratorV31["generateDocument"]> | undefined;

/** The OpenAPI 3.1 document of /api, served at /api/openapi.json and rendered at /api/docs. */
export function openApiDocument() {
  if (document) return document;
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "session", { type: "apiKey", in: "cookie", name: "cbs_session" });
  registry.registerComponent("securitySchemes", "token", { type: "http", scheme: "bearer", description: "An API token (`cbs_…`)." });
  for (const [method, path, route] of API_ROUTES) registry.registerPath(toRouteConfig(method, path, route));
  document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: { title: "Cloud backend service API", version: "1.0.0", description: "The routes the builder's frontend and the dashboard call." },
    security: [{ session: [] }, { token: [] }],
  });
  return document;
}
