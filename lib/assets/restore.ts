import crypto from "node:crypto";
import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import type { BlobStore } from "@/lib/blob";
import { log } from "@/lib/log";
import { upsertProjectAsset, type ProjectAssetRecord } from "@/lib/store/assets";
import { takeAssetInventory } from "./inventory";
import { ASSET_FILES_DIR, assetBlobPathname, assetLocalPath, readAssetManifest, serializeAssetManifest } from "./manifest";
import { commitStaging, createStaging, discardStaging, type StagedChange, stageHostFile, type Staging } from "./sandbox-files";
import { type AssetStorage, type AssetTarget, manifestEntryOf } from "./store";

/** What {@link restoreProjectAssets} did and found. */
export interface AssetRestoreReport {
  /** Files written back into `assets/images/` from the blob store. */
  restored: string[];
  /** Manifest entries with a blob but no record, recorded now (uploads of earlier versions). */
  recorded: string[];
  /** Blobs under the assets prefix nobody knows; left for `npm run assets:reconcile`. */
  orphanBlobs: string[];
  /** Recorded or listed assets whose blob is gone; their entries stay as they are. */
  missingBlobs: string[];
}

/**
 * Makes the sandbox hold every recorded asset (after a restart cleaned the untracked files, or in
 * a new sandbox): files missing from `assets/images/` (or of another size) are copied from the
 * blob store and the manifest entries rewritten from the record, all made visible in one step
 * under the project's lock. Entries the manifest has beyond the record are kept. The check at
 * restore reports orphan blobs and missing blobs in the log and the result; it deletes nothing.
 */
export async function restoreProjectAssets(target: AssetTarget, storage: AssetStorage): Promise<AssetRestoreReport> {
  const { sandbox, projectId } = target;
  return storage.manifestLock.run(projectId, async (db) => {
    const manifest = await readAssetManifest(sandbox);
    const before = serializeAssetManifest(manifest);
    const inventory = await takeAssetInventory(target, manifest, { db, blobs: storage.blobs });
    for (const asset of inventory.unrecorded) await upsertProjectAsset(db, projectId, asset);
    const onDisk = await sandboxFileSizes(target);
    const staging = createStaging();
    const changes: StagedChange[] = [];
    const restored: string[] = [];
    try {
      for (const asset of [...inventory.present, ...inventory.unrecorded]) {
        manifest.assets[asset.filename] = manifestEntryOf(asset);
        if (onDisk.get(asset.filename) === asset.size) continue;
        const stagedPath = await stageBlob(target, staging, asset, storage.blobs, changes.length);
        changes.push({ move: stagedPath, to: assetLocalPath(asset.filename) });
        restored.push(asset.filename);
      }
      if (changes.length > 0 || serializeAssetManifest(manifest) !== before) await commitStaging(sandbox, staging, changes, manifest);
    } catch (error) {
      await discardStaging(sandbox, staging);
      throw error;
    }
    const report = {
      restored,
      recorded: inventory.unrecorded.map((asset) => asset.filename),
      orphanBlobs: inventory.orphanBlobs,
      missingBlobs: inventory.missingBlobs,
    };
    if (report.orphanBlobs.length > 0 || report.missingBlobs.length > 0) {
      log.warn("asset restore found blobs and entries that do not match; run npm run assets:reconcile", { projectId, ...report });
    }
    return report;
  });
}

/** Sizes of the files in the sandbox's `assets/images/`, by name. */
async function sandboxFileSizes({ sandbox }: AssetTarget): Promise<Map<string, number>> {
  if (!(await sandbox.files.exists(ASSET_FILES_DIR))) return new Map();
  return new Map((await sandbox.files.list(ASSET_FILES_DIR)).map((entry) => [entry.name, entry.size]));
}

/** Copies an asset's blob into the staging directory (through a host temporary file). */
async function stageBlob(target: AssetTarget, staging: Staging, asset: ProjectAssetRecord, blobs: BlobStore, index: number): Promise<string> {
  const found = await blobs.get(assetBlobPathname(target.userId, target.projectId, asset.filename));
  if (!found) throw new Error(`The blob of asset ${asset.filename} vanished during its restore.`);
  const hostPath = path.join(os.tmpdir(), `asset-restore-${crypto.randomUUID()}`);
  try {
    await pipeline(Readable.fromWeb(found.stream as NodeWebReadableStream<Uint8Array>), createWriteStream(hostPath));
    return await stageHostFile(target.sandbox, staging, hostPath, found.blob.size, `file-${index}`);
  } finally {
    await fs.rm(hostPath, { force: true });
  }
}
