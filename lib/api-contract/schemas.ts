import { z } from "zod";
import { commitShaSchema } from "@/lib/bundles/commit";
import { channelSchema, PLATFORMS, rolloutPercentSchema } from "@/lib/updates/streams";

/**
 * The zod schemas of our /api: the routes parse their input with the request schemas, and the
 * OpenAPI document (./document.ts) is generated from both kinds. Response objects are strict, so
 * a field a route adds without adding it here fails every route test (tests/helpers/api-contract.ts).
 * One thing has one name everywhere: an asset's address is `blobUrl`, the backend dev server's
 * state is `backendDevServer: "running" | "stopped"`.
 */

// ---- shared pieces

export const errorBody = z
  .strictObject({ error: z.strictObject({ code: z.string(), message: z.string() }) })
  .meta({ id: "ErrorBody", description: "Every error: a stable `code` and a sentence for the user." });

export const successBody = z.strictObject({ success: z.literal(true) }).meta({ id: "Success" });

const isoTime = z.string().meta({ description: "ISO 8601", format: "date-time" });

export const projectIdQuery = z.object({ projectId: z.string().min(1) });
export const projectIdBody = z.object({ projectId: z.string().min(1) });
export const projectIdParams = z.object({ id: z.string() });

export const backendDevServerState = z.enum(["running", "stopped"]).meta({ id: "BackendDevServerState" });

// ---- projects

/** Spec 2.1: the `backendProject` of a project; null means "not connected". */
export const backendProjectState = z
  .discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("connecting") }),
    z.strictObject({
      kind: z.literal("connected"),
      projectSlug: z.string(),
      teamSlug: z.string(),
      deploymentUrl: z.string(),
      deploymentName: z.string(),
      warningMessage: z.string().optional(),
    }),
    z.strictObject({ kind: z.literal("failed"), errorMessage: z.string() }),
  ])
  .nullable()
  .meta({ id: "BackendProjectState", description: "null: not connected." });

export const projectResponse = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    sandboxId: z.string().nullable(),
    previewUrl: z.string().nullable(),
    backendProject: backendProjectState,
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: "Project" });

export const projectName = z.string().trim().min(1).max(100);
export const createProjectBody = z.object({ name: projectName });
export const renameProjectBody = createProjectBody;
export const projectListResponse = z.strictObject({ projects: z.array(projectResponse) });

export const sandboxRestartResponse = z.strictObject({
  success: z.literal(true),
  previewUrl: z.string(),
  backendDevServer: backendDevServerState,
});

export const systemPromptResponse = z
  .strictObject({
    systemPrompt: z.string(),
    backendConnected: z.boolean().meta({ description: "Spec 1.6: the backend guidelines are included exactly when true." }),
    version: z.string().meta({ description: "Changes exactly when the prompt text changes." }),
  })
  .meta({ id: "SystemPrompt" });

// ---- assets, images, screenshots

export const assetUploadResponse = z
  .strictObject({
    blobUrl: z.string().meta({ description: "Versioned (`?v=<content digest>`): the manifest's `blobUrl`." }),
    pathname: z.string(),
    filename: z.string(),
    contentType: z.string(),
    size: z.number(),
  })
  .meta({ id: "AssetUpload" });

export const listedAsset = z
  .strictObject({ filename: z.string(), blobUrl: z.string(), contentType: z.string(), size: z.number() })
  .meta({ id: "Asset" });
export const assetListResponse = z.strictObject({ assets: z.array(listedAsset) });

export const deleteAssetBody = z.object({ projectId: z.string().min(1), filename: z.string().min(1).max(1024) });

export const assetReconcileBody = z.object({ dryRun: z.boolean().default(false) });
export const assetReconcileResponse = z.strictObject({
  projectId: z.string(),
  dryRun: z.boolean(),
  sandbox: z.enum(["read", "none"]),
  orphanBlobs: z.array(z.string()),
  recorded: z.array(z.string()),
  missingBlobs: z.array(z.string()),
});

export const chatImageResponse = z.strictObject({ url: z.string(), pathname: z.string(), contentType: z.string() }).meta({ id: "ChatImage" });

export const screenshotsResponse = z.strictObject({ mobileUrl: z.string(), desktopUrl: z.string() });

const multipartUpload = (fields: Record<string, z.ZodType>) => z.object({ file: z.string().meta({ format: "binary" }), ...fields });
export const assetUploadForm = multipartUpload({ projectId: z.string() });
export const chatImageForm = multipartUpload({});

// ---- bundles and updates

const platform = z.enum(PLATFORMS);
/** Where a publish or promote goes: a channel (the app's `expo-channel-name`), to a share of devices. */
const releaseTo = { channel: channelSchema.optional(), rolloutPercent: rolloutPercentSchema.optional() };

export const bundleBody = z.object({
  commitSha: commitShaSchema.optional(),
  commitMessage: z.string().max(10_000).optional(),
  /** @defaultValue ["ios", "android"], exported in one run; `["ios"]` or `["android"]` exports one */
  platforms: z.array(platform).min(1).optional(),
  ...releaseTo,
});
const platformBundle = z.strictObject({ manifestUrl: z.string(), bundleUrl: z.string() });
export const bundleResponse = z.strictObject({
  success: z.literal(true),
  /** The iOS bundle's (else the first platform's), as spec 4.4 answers. */
  manifestUrl: z.string(),
  bundleUrl: z.string(),
  platforms: z.partialRecord(platform, platformBundle),
  commitSha: z.string(),
  /** No commit was named and the working tree had changes: they were committed first and built. */
  workingTreeCommitted: z.boolean(),
  /** The working tree differs from the built (named) commit: the preview shows something else. */
  workingTreeDiffers: z.boolean(),
});

const releaseEntry = { commitSha: z.string().nullable(), rolloutPercent: z.number(), releasedAt: z.string() };
/**
 * What an update URL serves for one stream (channel, platform, runtime version); a null commit:
 * the update embedded in the app. Under a staged rollout (`rolloutPercent` < 100) the devices left
 * out get `stable`.
 */
const releaseSummary = z
  .strictObject({ channel: z.string(), platform: z.string(), runtimeVersion: z.string(), ...releaseEntry, stable: z.strictObject(releaseEntry).nullable() })
  .meta({ id: "Release" });
export const releaseResponse = z.strictObject({ releases: z.array(releaseSummary) });
export const releaseBody = z.union([
  z.strictObject({ commitSha: commitShaSchema, platform: platform.optional(), ...releaseTo }),
  z.strictObject({ embedded: z.literal(true), runtimeVersion: z.string().min(1).max(256), platform: platform.optional(), channel: channelSchema.optional() }),
]);
const manifestAsset = z.object({ hash: z.string().optional(), key: z.string(), contentType: z.string(), fileExtension: z.string().optional(), url: z.string() });
/** An Expo Updates protocol v1 manifest, as the update URL serves it to a client that accepts only JSON. */
export const expoUpdatesManifest = z
  .object({
    id: z.string(),
    createdAt: z.string(),
    runtimeVersion: z.string(),
    launchAsset: manifestAsset,
    assets: z.array(manifestAsset),
    metadata: z.record(z.string(), z.string()),
    extra: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "ExpoUpdatesManifest" });
export const bundleListResponse = z.strictObject({
  bundles: z.array(
    z.strictObject({
      commitSha: z.string(),
      commitMessage: z.string(),
      platform: z.string(),
      runtimeVersion: z.string(),
      updateId: z.string(),
      size: z.number(),
      createdAt: z.string(),
      live: z.boolean(),
      /** Why its last delivery check failed (it never went live then); null when it passed. */
      deliveryError: z.string().nullable(),
    }),
  ),
  releases: z.array(releaseSummary),
});

export const bundleCleanupBody = z.object({
  keep: z.number().int().min(0).optional(),
  maxAgeDays: z.number().int().min(0).optional(),
  dryRun: z.boolean().optional(),
});
export const bundleCleanupResponse = z.strictObject({
  projects: z.number(),
  commitsKept: z.number(),
  commitsDeleted: z.number(),
  blobsDeleted: z.number(),
  bytesDeleted: z.number(),
});

// ---- repository mirror

/**
 * The project's app repository outside its sandbox: the newest mirror, the last failed attempt
 * (a newer success clears it) and what the last rebuild of a lost sandbox restored.
 */
export const repositoryResponse = z.strictObject({
  mirror: z
    .strictObject({
      mirroredAt: z.string(),
      headCommit: z.string(),
      branch: z.string().nullable(),
      /** The working tree differed from HEAD and was saved with it (`refs/mirror/wip`). */
      workingTreeSaved: z.boolean(),
      sizeBytes: z.number(),
    })
    .nullable(),
  lastFailure: z.strictObject({ at: z.string(), message: z.string() }).nullable(),
  lastRestore: z
    .strictObject({ restoredAt: z.string(), mirroredAt: z.string(), headCommit: z.string(), workingTreeRestored: z.boolean() })
    .nullable(),
});
export const repositoryAutosaveResponse = z.strictObject({ mirrored: z.number(), unchanged: z.number(), failed: z.number(), skipped: z.number() });

// ---- background jobs

export const projectJobParams = z.object({ id: z.string(), jobId: z.string() });

/**
 * A queued job (POST answers 202 with it and `Location: /api/projects/<id>/jobs/<jobId>`) and
 * its status: `result` once succeeded (what the synchronous route used to answer), `error` once
 * failed; `attempts` counts runs, retries included.
 */
export const jobResponse = z
  .strictObject({
    id: z.string(),
    kind: z.enum(["bundle-build", "screenshots", "bundle-cleanup", "project-delete", "repository-autosave"]),
    state: z.enum(["queued", "running", "succeeded", "failed"]),
    projectId: z.string().nullable(),
    attempts: z.number().int(),
    result: z.union([bundleResponse, screenshotsResponse, bundleCleanupResponse, repositoryAutosaveResponse, z.null()]),
    error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: "Job" });

// ---- backend

const sandboxWiringStep = z.enum(["backend_files", "layout_wrapper", "backend_package", "backend_url"]);

export const enableResponse = z.strictObject({
  success: z.literal(true),
  deploymentUrl: z.string(),
  completedSandboxSteps: z.array(sandboxWiringStep).optional(),
  warningMessage: z.string().optional(),
});

export const managedConnectResponse = z.strictObject({
  success: z.literal(true),
  deploymentUrl: z.string(),
  deploymentName: z.string(),
  projectSlug: z.string(),
  teamSlug: z.string(),
});

export const disconnectBody = z.object({ projectId: z.string().min(1), deleteBackendProject: z.boolean().optional() });

export const backendDevStartResponse = z.strictObject({ success: z.boolean() });

export const backendPush = z
  .strictObject({
    state: z.enum(["pushing", "pushed", "failed"]).meta({
      description: "pushing: started, no outcome yet; then the latest push's outcome (`Convex functions ready!`, or a typecheck, bundling or push error).",
    }),
    at: isoTime,
  })
  .nullable()
  .meta({
    id: "BackendPush",
    description: "The backend dev server's latest push as its output tells, and when its state was reached; null when the service does not read its output (stopped, or started before a restart).",
  });

export const backendStatusResponse = z
  .strictObject({
    backendProject: backendProjectState,
    backendDevServer: backendDevServerState,
    backendPush,
    missingSandboxWiring: z.array(sandboxWiringStep),
  })
  .meta({ id: "BackendStatus" });

export const envVariablesResponse = z
  .strictObject({ variables: z.array(z.strictObject({ name: z.string(), valueLength: z.number().int() })) })
  .meta({ id: "EnvVariables", description: "The deployment's variables; values never leave the server." });
export const setEnvVariablesBody = z.object({
  values: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,39}$/, "must be a variable name (letters, digits, _; at most 40)"), z.string().min(1).max(8192))
    .refine((values) => Object.keys(values).length > 0, "values must set at least one variable")
    // The backend's own limit (docs "Environment Variables"); refused here before anything is sent.
    .refine((values) => Object.keys(values).length <= 512, "values may set at most 512 variables (the backend's limit)"),
});

// ---- errors, realtime, service

export const errorNotification = z
  .strictObject({
    id: z.string(),
    message: z.string(),
    timestamp: isoTime,
    projectId: z.string(),
    type: z.enum(["backend-error", "runtime-error", "build-error", "resolved"]),
    source: z.enum(["backend-dev", "app-dev", "cloud-enable"]),
    kind: z
      .enum(["typecheck", "bundle", "push", "schema", "function-runtime", "app-bundle", "app-runtime"])
      .optional()
      .describe("What failed; absent on `resolved` notifications and on notifications stored before errors were structured."),
    file: z.string().optional().describe("The file the error names, relative to the app's folder (e.g. `convex/messages.ts`)."),
    line: z.number().int().optional().describe("1-based."),
    column: z.number().int().optional().describe("1-based."),
    codeFrame: z.string().optional().describe("The source lines around the error, as the tool printed them."),
    functionName: z.string().optional().describe("A function error's function, e.g. `messages:send`."),
    fingerprint: z
      .string()
      .optional()
      .describe("The same for every repeat of the error (positions and times left out); a repeat is not sent again while the error is unresolved."),
    firstSeenAt: isoTime.optional(),
    resolvedAt: isoTime.nullable().optional().describe("Set once a later success of the same dev server resolved the error; null until then."),
    resolves: z.array(z.string()).optional().describe("On a `resolved` notification: the fingerprints of the errors it resolved."),
  })
  .meta({ id: "ErrorNotification" });
export const errorHistoryResponse = z.strictObject({ notifications: z.array(errorNotification) });
export const checkResponse = z
  .strictObject({
    pushed: z.boolean().describe("Whether the backend dev server pushed the files as they were when the check began (false: a typecheck, bundle or push error)."),
    errors: z.array(errorNotification).describe("The backend's unresolved errors after that push, oldest first."),
    durationMs: z.number().int().nonnegative().describe("How long the check took."),
  })
  .meta({ id: "Check" });
export const jsonRpcMessages = z
  .union([z.looseObject({ jsonrpc: z.literal("2.0") }), z.array(z.looseObject({ jsonrpc: z.literal("2.0") }))])
  .meta({ id: "JsonRpcMessages", description: "A JSON-RPC 2.0 message or batch of the Model Context Protocol (Streamable HTTP transport)." });

export const channelAuthorizationForm = z.object({ socket_id: z.string(), channel_name: z.string() });
export const channelAuthorizationResponse = z.strictObject({ auth: z.string() });

export const toolchainResponse = z
  .discriminatedUnion("state", [
    z.strictObject({ state: z.literal("idle") }),
    z.strictObject({
      state: z.literal("preparing"),
      since: isoTime,
      phase: z.enum(["resolving", "downloading", "finishing"]),
      manifests: z.number(),
      packages: z.number(),
      bytes: z.number(),
    }),
    z.strictObject({ state: z.literal("ready") }),
    z.strictObject({ state: z.literal("failed"), message: z.string() }),
  ])
  .meta({ id: "ToolchainState" });

export const healthResponse = z.strictObject({
  ok: z.literal(true),
  store: z.string(),
  blob: z.string(),
  sandbox: z.string(),
  realtime: z.string(),
  backendProvider: z.string(),
});

export const openApiDocumentResponse = z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string() }), paths: z.record(z.string(), z.unknown()) });
