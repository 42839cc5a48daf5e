import type { z } from "zod";
import type * as s from "./schemas";

/**
 * The bodies of our /api as TypeScript types, generated from the same zod schemas as the OpenAPI
 * document (`/api/openapi.json`). The builder's frontend and the dashboard import them from here.
 */
export type ApiErrorBody = z.output<typeof s.errorBody>;
export type ApiProject = z.output<typeof s.projectResponse>;
export type ApiProjectList = z.output<typeof s.projectListResponse>;
export type ApiBackendProjectState = z.output<typeof s.backendProjectState>;
export type ApiBackendDevServerState = z.output<typeof s.backendDevServerState>;
export type ApiSandboxRestart = z.output<typeof s.sandboxRestartResponse>;
export type ApiSystemPrompt = z.output<typeof s.systemPromptResponse>;
export type ApiAssetUpload = z.output<typeof s.assetUploadResponse>;
export type ApiAsset = z.output<typeof s.listedAsset>;
export type ApiAssetList = z.output<typeof s.assetListResponse>;
export type ApiAssetReconcile = z.output<typeof s.assetReconcileResponse>;
export type ApiChatImage = z.output<typeof s.chatImageResponse>;
export type ApiScreenshots = z.output<typeof s.screenshotsResponse>;
export type ApiBundle = z.output<typeof s.bundleResponse>;
export type ApiBundleCleanup = z.output<typeof s.bundleCleanupResponse>;
export type ApiBundleList = z.output<typeof s.bundleListResponse>;
export type ApiRepository = z.output<typeof s.repositoryResponse>;
export type ApiJob = z.output<typeof s.jobResponse>;
export type ApiRelease = z.output<typeof s.releaseResponse>;
export type ApiEnable = z.output<typeof s.enableResponse>;
export type ApiManagedConnect = z.output<typeof s.managedConnectResponse>;
export type ApiBackendStatus = z.output<typeof s.backendStatusResponse>;
export type ApiErrorNotification = z.output<typeof s.errorNotification>;
export type ApiErrorHistory = z.output<typeof s.errorHistoryResponse>;
export type ApiCheck = z.output<typeof s.checkResponse>;
export type ApiToolchainState = z.output<typeof s.toolchainResponse>;
export type ApiHealth = z.output<typeof s.healthResponse>;

export type ApiCreateProjectBody = z.input<typeof s.createProjectBody>;
export type ApiDeleteAssetBody = z.input<typeof s.deleteAssetBody>;
export type ApiDisconnectBody = z.input<typeof s.disconnectBody>;
export type ApiBundleBody = z.input<typeof s.bundleBody>;
export type ApiBundleCleanupBody = z.input<typeof s.bundleCleanupBody>;
export type ApiReleaseBody = z.input<typeof s.releaseBody>;
export type ApiEnvVariables = z.output<typeof s.envVariablesResponse>;
