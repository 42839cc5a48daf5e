import { type BlobStore, listAllBlobs } from "@/lib/blob";
import type { SqlExecutor } from "@/lib/store";
import { listProjectAssets, type ProjectAssetRecord } from "@/lib/store/assets";
import { isStoredFilename } from "./filename";
import { assetBlobPathname, type AssetManifest } from "./manifest";
import { isUrlOfBlob } from "./version";

/** A project's assets as its record, its sandbox's manifest and the blob index see them. */
export interface AssetInventory {
  /** Recorded assets whose blob exists. */
  present: ProjectAssetRecord[];
  /** Blobs with no record that the manifest lists: assets uploaded before assets were recorded. */
  unrecorded: ProjectAssetRecord[];
  /** Pathnames under the project's assets prefix that neither the record nor the manifest knows. */
  orphanBlobs: string[];
  /** Filenames the record or the manifest lists whose blob is gone. */
  missingBlobs: string[];
}

/** The blob index prefix of a project's assets. */
export const assetBlobPrefix = (userId: string, projectId: string) => assetBlobPathname(userId, projectId, "");

/**
 * Compares the three views of a project's assets. Call it under the project's manifest lock, so
 * no upload or delete is half-way through.
 */
export async function takeAssetInventory(
  project: { userId: string; projectId: string },
  manifest: AssetManifest,
  storage: { db: SqlExecutor; blobs: BlobStore },
): Promise<AssetInventory> {
  const prefix = assetBlobPrefix(project.userId, project.projectId);
  const [records, blobs] = await Promise.all([listProjectAssets(storage.db, project.projectId), listAllBlobs(storage.blobs, prefix)]);
  const recorded = new Map(records.map((record) => [record.filename, record]));
  const blobNames = new Set<string>();
  const inventory: AssetInventory = { present: [], unrecorded: [], orphanBlobs: [], missingBlobs: [] };
  for (const blob of blobs) {
    const filename = blob.pathname.slice(prefix.length);
    const record = recorded.get(filename);
    const listed = Object.hasOwn(manifest.assets, filename) ? manifest.assets[filename] : undefined;
    if (!isStoredFilename(filename) || (!record && !listed)) {
      inventory.orphanBlobs.push(blob.pathname);
      continue;
    }
    blobNames.add(filename);
    if (record) {
      inventory.present.push(record);
      continue;
    }
    // The manifest is the app's file: its URL is kept only when it names this blob.
    const listedUrl = typeof listed?.blobUrl === "string" && isUrlOfBlob(listed.blobUrl, blob.url) ? listed.blobUrl : blob.url;
    const contentType = (await storage.blobs.head(blob.pathname))?.contentType ?? "application/octet-stream";
    inventory.unrecorded.push({ filename, blobUrl: listedUrl, contentType, size: blob.size });
  }
  const known = new Set([...recorded.keys(), ...Object.keys(manifest.assets)]);
  inventory.missingBlobs = [...known].filter((filename) => !blobNames.has(filename)).sort();
  return inventory;
}
