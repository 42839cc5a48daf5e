import path from "node:path";
import { requireOwnedProject } from "@/lib/auth";
import { getBlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import type { OpenProjectSandbox } from "@/lib/projects";
import { getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import type { User } from "@/lib/store/users";
import { acceptFile } from "./accept";
import { MissingUploadFieldError } from "./errors";
import type { AssetKind } from "./file-types";
import { getAssetManifestLock } from "./lock";
import { type FormSource, MAX_UPLOAD_BYTES, type ReceiveOptions, withReceivedForm } from "./multipart";
import { type AssetReconcileReport, reconcileProjectAssets } from "./reconcile";
import { type AssetRestoreReport, restoreProjectAssets } from "./restore";
import { type AssetStorage, type AssetUploadResult, deleteAsset, storeAsset } from "./store";

export * from "./errors";
export { acceptFile, type AcceptedFile, type AcceptPolicy } from "./accept";
export { detectSignature, hasSvgRoot } from "./content";
export { ALLOWED_FILE_TYPES, type AllowedFileType, type AssetKind } from "./file-types";
export { extensionOf, MAX_FILENAME_BYTES, sanitizeFilename } from "./filename";
export { assetBlobPrefix } from "./inventory";
export { createKeyedLock, getAssetManifestLock, type KeyedLock } from "./lock";
export * from "./manifest";
export {
  formSourceOfNodeRequest,
  formSourceOfRequest,
  MAX_UPLOAD_BYTES,
  withReceivedForm,
  type FormSource,
  type ReceivedFile,
  type ReceivedForm,
  type ReceiveOptions,
} from "./multipart";
export { ASSET_STAGING_DIR } from "./sandbox-files";
export { reconcileProjectAssets, type AssetMaintenance, type AssetReconcileReport } from "./reconcile";
export { restoreProjectAssets, type AssetRestoreReport } from "./restore";
export { deleteAsset, manifestEntryOf, storeAsset, type AssetStorage, type AssetTarget, type AssetUploadResult } from "./store";

/** Spec 8: every family is allowed as a project asset. */
const ASSET_KINDS: readonly AssetKind[] = ["image", "font", "audio", "video"];

/** How upload routes read their form: field `file`, 10 MB, spooled under `DATA_DIR/uploads`. */
export function uploadReceiveOptions(): ReceiveOptions {
  return { fileField: "file", maxFileBytes: MAX_UPLOAD_BYTES, spoolDir: path.join(getConfig().DATA_DIR, "uploads") };
}

/** The process-wide blob store and manifest lock. */
export function defaultAssetStorage(): AssetStorage {
  return { blobs: getBlobStore(), manifestLock: getAssetManifestLock() };
}

/**
 * POST /api/assets/upload: reads the multipart form (`file`, `projectId`), checks that `user`
 * owns the project (404 otherwise), validates the file and stores it as an asset in the sandbox
 * `openSandbox` gives.
 */
export function uploadAsset(form: FormSource, user: User, openSandbox: OpenProjectSandbox): Promise<AssetUploadResult> {
  return withReceivedForm(form, uploadReceiveOptions(), async ({ fields, file }) => {
    if (!fields.projectId) throw new MissingUploadFieldError('The form has no "projectId" field.');
    const project = await requireOwnedProject(user, fields.projectId);
    const accepted = await acceptFile(file, { kinds: ASSET_KINDS });
    const sandbox = await openSandbox(project);
    return storeAsset({ userId: user.id, projectId: project.id, sandbox }, accepted, defaultAssetStorage());
  });
}

/** DELETE /api/assets/delete: removes one asset of a project `user` owns (404 otherwise). */
export async function deleteAssetOfProject(user: User, projectId: string, filename: string, openSandbox: OpenProjectSandbox): Promise<void> {
  const project = await requireOwnedProject(user, projectId);
  const sandbox = await openSandbox(project);
  await deleteAsset({ userId: user.id, projectId: project.id, sandbox }, filename, defaultAssetStorage());
}

/** Reconciles one project's assets with the process-wide storage and sandboxes (route and CLI). */
export async function reconcileAssetsOfProject(project: Project, options: { dryRun: boolean }): Promise<AssetReconcileReport> {
  return reconcileProjectAssets(project, { ...defaultAssetStorage(), db: await getStore(), sandboxes: getSandboxProvider() }, options);
}

/** The sandbox lifecycle step: a (re)started or new sandbox of `project` gets its recorded assets back. */
export async function restoreAssetsOfProject(sandbox: Sandbox, project: Project): Promise<AssetRestoreReport> {
  return restoreProjectAssets({ userId: project.ownerId, projectId: project.id, sandbox }, defaultAssetStorage());
}
