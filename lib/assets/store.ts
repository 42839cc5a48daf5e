import fs from "node:fs";
import type { BlobStore, PutBlobResult } from "@/lib/blob";
import { log } from "@/lib/log";
import type { Sandbox } from "@/lib/sandbox";
import type { AcceptedFile } from "./accept";
import { AssetNotFoundError, InvalidFilenameError } from "./errors";
import { sanitizeFilename } from "./filename";
import type { KeyedLock } from "./lock";
import { assetBlobPathname, assetLocalPath, hasAsset, readAssetManifest } from "./manifest";
import { commitStaging, createStaging, discardStaging, stageHostFile } from "./sandbox-files";

/** The project an asset belongs to, and its running sandbox. */
export interface AssetTarget {
  userId: string;
  projectId: string;
  sandbox: Sandbox;
}

/** Where assets go and how manifest updates of one project are serialised. */
export interface AssetStorage {
  blobs: BlobStore;
  /** Keyed by project id. */
  manifestLock: KeyedLock;
}

/** The answer of POST /api/assets/upload. */
export interface AssetUploadResult {
  url: string;
  pathname: string;
  filename: string;
  contentType: string;
  size: number;
}

/**
 * Stores an accepted file as a project asset (spec 4.3): staged in the sandbox, put in the blob
 * store at `<user>/<project>/assets/<filename>` (public, no suffix, overwriting), then moved into
 * `assets/images/` and entered in the manifest under the project's lock. Any failure undoes the
 * steps already done (blob deleted, staging removed), so a new asset is either complete in both
 * places or absent from both. Replacing an existing asset cannot bring its old bytes back if the
 * last step fails: the blob store has already replaced them.
 */
export async function storeAsset(target: AssetTarget, file: AcceptedFile, storage: AssetStorage): Promise<AssetUploadResult> {
  const { sandbox } = target;
  const pathname = assetBlobPathname(target.userId, target.projectId, file.filename);
  const localPath = assetLocalPath(file.filename);
  const staging = createStaging();
  let put: PutBlobResult | undefined;
  try {
    const stagedPath = await stageHostFile(sandbox, staging, file.path, file.size);
    put = await storage.blobs.put(pathname, fs.createReadStream(file.path), {
      access: "public",
      allowOverwrite: true,
      contentType: file.contentType,
    });
    const blobUrl = put.url;
    await storage.manifestLock.run(target.projectId, async () => {
      const manifest = await readAssetManifest(sandbox);
      manifest.assets[file.filename] = { blobUrl, localPath, contentType: file.contentType, size: file.size };
      await commitStaging(sandbox, staging, [{ move: stagedPath, to: localPath }], manifest);
    });
  } catch (error) {
    await Promise.all([put && deleteBlobQuietly(storage.blobs, put.url), discardStaging(sandbox, staging)]);
    throw error;
  }
  return { url: put.url, pathname: put.pathname, filename: file.filename, contentType: file.contentType, size: file.size };
}

/**
 * DELETE /api/assets/delete (spec 4.3): the manifest decides whether the asset exists (404
 * otherwise); then its blob is deleted, then its sandbox file and manifest entry go together
 * under the project's lock. The blob deleted is the one at this project's asset pathname: the
 * entry's `blobUrl` is not trusted to name it, since the app's own code can write the manifest.
 * A failure leaves the entry in place, so calling again finishes the job; once done, a second
 * call answers 404 and touches nothing.
 */
export async function deleteAsset(target: AssetTarget, filename: string, storage: AssetStorage): Promise<void> {
  if (!isStoredFilename(filename)) throw new InvalidFilenameError(`${JSON.stringify(filename.slice(0, 300))} is not a valid asset filename.`);
  const { sandbox } = target;
  if (!hasAsset(await readAssetManifest(sandbox), filename)) throw new AssetNotFoundError(filename);
  await storage.blobs.del(assetBlobPathname(target.userId, target.projectId, filename));
  await storage.manifestLock.run(target.projectId, async () => {
    const manifest = await readAssetManifest(sandbox);
    if (!hasAsset(manifest, filename)) throw new AssetNotFoundError(filename);
    delete manifest.assets[filename];
    const staging = createStaging();
    try {
      await commitStaging(sandbox, staging, [{ remove: assetLocalPath(filename) }], manifest);
    } catch (error) {
      await discardStaging(sandbox, staging);
      throw error;
    }
  });
}

/** True for names an upload can have produced: sanitising leaves them unchanged. */
function isStoredFilename(filename: string): boolean {
  try {
    return sanitizeFilename(filename) === filename;
  } catch {
    return false;
  }
}

async function deleteBlobQuietly(blobs: BlobStore, url: string): Promise<void> {
  await blobs.del(url).catch((error: unknown) => log.warn("could not delete the blob of a failed asset upload", { url, error }));
}
