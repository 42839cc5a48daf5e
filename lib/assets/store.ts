import { type BlobStore, prepareBlobFile, type PreparedBlobFile, type PutBlobResult } from "@/lib/blob";
import { log } from "@/lib/log";
import type { Sandbox } from "@/lib/sandbox";
import type { SqlExecutor } from "@/lib/store";
import { deleteProjectAsset, getProjectAsset, type ProjectAssetRecord, upsertProjectAsset } from "@/lib/store/assets";
import type { AcceptedFile } from "./accept";
import { AssetNotFoundError, InvalidFilenameError } from "./errors";
import { isStoredFilename } from "./filename";
import type { KeyedLock } from "./lock";
import { assetBlobPathname, assetLocalPath, type AssetManifestEntry, hasAsset, readAssetManifest } from "./manifest";
import { commitStaging, createStaging, discardStaging, stageHostFile } from "./sandbox-files";
import { contentVersion, versionedAssetUrl } from "./version";

/** The project an asset belongs to, and its running sandbox. */
export interface AssetTarget {
  userId: string;
  projectId: string;
  sandbox: Sandbox;
}

/**
 * Where assets go and how changes of one project are serialised. Their record (`project_assets`,
 * which the sandbox's manifest is rebuilt from) is read and written through the lock's executor.
 */
export interface AssetStorage {
  blobs: BlobStore;
  /** Keyed by project id. */
  manifestLock: KeyedLock;
}

/** The answer of POST /api/assets/upload. */
export interface AssetUploadResult {
  /** Versioned (`?v=<content digest>`): the same URL as the manifest's `blobUrl`. */
  blobUrl: string;
  pathname: string;
  filename: string;
  contentType: string;
  size: number;
}

/** The manifest entry (spec 2.10) of a recorded asset. */
export const manifestEntryOf = (asset: ProjectAssetRecord): AssetManifestEntry => ({
  blobUrl: asset.blobUrl,
  localPath: assetLocalPath(asset.filename),
  contentType: asset.contentType,
  size: asset.size,
});

/**
 * Stores an accepted file as a project asset (spec 4.3), taking the file at `file.path` over (the
 * caller removes it afterwards, stored or not): staged in the sandbox and made durable in the blob
 * store, both before the project's lock, so concurrent uploads of a project do their byte work
 * side by side; then under the lock the blob is committed at `<user>/<project>/assets/<filename>`
 * (public, no suffix, overwriting), recorded in `project_assets`, moved into `assets/images/` and
 * entered in the manifest. Committing the blob under the lock means a reconcile never sees the
 * blob of an upload in flight as an orphan. Any failure undoes the steps already done (blob
 * deleted, record removed, staging removed), so a new asset is either complete everywhere or
 * absent. Replacing an existing asset cannot bring its old bytes back if a later step fails: the
 * blob store has already replaced them.
 */
export async function storeAsset(target: AssetTarget, file: AcceptedFile, storage: AssetStorage): Promise<AssetUploadResult> {
  const { sandbox, projectId } = target;
  const pathname = assetBlobPathname(target.userId, projectId, file.filename);
  const staging = createStaging();
  // The blob's bytes go to disk while the sandbox copy is made, rather than after it (bench/upload.ts).
  const preparing = prepareBlobFile(storage.blobs, file.path);
  try {
    const version = contentVersion(file.sha256);
    // Both settle before a failure cleans up, so no copy lands in a staging directory already removed.
    const [staged, prepared] = await Promise.allSettled([stageHostFile(sandbox, staging, file.path, file.size), preparing]);
    if (staged.status === "rejected") throw staged.reason;
    if (prepared.status === "rejected") throw prepared.reason;
    const [stagedPath, blobFile] = [staged.value, prepared.value];
    return await storage.manifestLock.run(projectId, async (db) => {
      let put: PutBlobResult | undefined;
      try {
        put = await blobFile.put(pathname, { access: "public", allowOverwrite: true, contentType: file.contentType });
        const asset = { filename: file.filename, blobUrl: versionedAssetUrl(put.url, version), contentType: file.contentType, size: file.size };
        await upsertProjectAsset(db, projectId, asset);
        const manifest = await readAssetManifest(sandbox);
        manifest.assets[file.filename] = manifestEntryOf(asset);
        await commitStaging(sandbox, staging, [{ move: stagedPath, to: assetLocalPath(file.filename) }], manifest);
        return { blobUrl: asset.blobUrl, pathname: put.pathname, filename: file.filename, contentType: file.contentType, size: file.size };
      } catch (error) {
        if (put) await Promise.all([deleteBlobQuietly(storage.blobs, put.url), forgetAssetQuietly(db, projectId, file.filename)]);
        throw error;
      }
    });
  } catch (error) {
    const blobFile = await preparing.catch(() => undefined);
    await Promise.all([discardStaging(sandbox, staging), blobFile && discardBlobQuietly(blobFile)]);
    throw error;
  }
}

/**
 * DELETE /api/assets/delete (spec 4.3): under the project's lock, an asset exists when its record,
 * the sandbox's manifest or the blob index knows it (404 otherwise), so assets whose manifest a
 * restart wiped, or blobs a failed step left behind, can still be deleted. Its blob goes first,
 * then its sandbox file and manifest entry together, then its record. The blob deleted is the one
 * at this project's asset pathname: the entry's `blobUrl` is not trusted to name it, since the
 * app's own code can write the manifest. A failure leaves the record in place, so calling again
 * finishes the job; once done, a second call answers 404 and touches nothing.
 */
export async function deleteAsset(target: AssetTarget, filename: string, storage: AssetStorage): Promise<void> {
  if (!isStoredFilename(filename)) throw new InvalidFilenameError(`${JSON.stringify(filename.slice(0, 300))} is not a valid asset filename.`);
  const { sandbox, projectId } = target;
  const pathname = assetBlobPathname(target.userId, projectId, filename);
  await storage.manifestLock.run(projectId, async (db) => {
    const [record, manifest, blob] = await Promise.all([
      getProjectAsset(db, projectId, filename),
      readAssetManifest(sandbox),
      storage.blobs.head(pathname),
    ]);
    if (!record && !hasAsset(manifest, filename) && !blob) throw new AssetNotFoundError(filename);
    await storage.blobs.del(pathname);
    delete manifest.assets[filename];
    const staging = createStaging();
    try {
      await commitStaging(sandbox, staging, [{ remove: assetLocalPath(filename) }], manifest);
    } catch (error) {
      await discardStaging(sandbox, staging);
      throw error;
    }
    await deleteProjectAsset(db, projectId, filename);
  });
}

async function discardBlobQuietly(blobFile: PreparedBlobFile): Promise<void> {
  await blobFile.discard().catch((error: unknown) => log.warn("could not remove the blob file of a failed asset upload", { error }));
}

async function deleteBlobQuietly(blobs: BlobStore, url: string): Promise<void> {
  await blobs.del(url).catch((error: unknown) => log.warn("could not delete the blob of a failed asset upload", { url, error }));
}

// On PostgreSQL the section's transaction rolls the record back anyway; the embedded store has none.
async function forgetAssetQuietly(db: SqlExecutor, projectId: string, filename: string): Promise<void> {
  await deleteProjectAsset(db, projectId, filename).catch((error: unknown) =>
    log.warn("could not remove the record of a failed asset upload", { projectId, filename, error }),
  );
}
