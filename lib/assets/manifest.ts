import { log } from "@/lib/log";
import { APP_DIR, FileNotFoundError, isSandboxError, type Sandbox } from "@/lib/sandbox";

/** Spec 2.10: where the asset manifest and the asset files live inside the sandbox. */
export const ASSETS_DIR = `${APP_DIR}/assets`;
export const ASSET_FILES_DIR = `${ASSETS_DIR}/images`;
export const ASSET_MANIFEST_PATH = `${ASSETS_DIR}/manifest.json`;

/** Spec 2.10: one manifest entry. */
export interface AssetManifestEntry {
  blobUrl: string;
  /** `/home/user/app/assets/images/<filename>`. */
  localPath: string;
  contentType: string;
  /** Bytes. */
  size: number;
}

/** Spec 2.10: the manifest; keys other than `assets` are kept as they are. */
export interface AssetManifest {
  assets: Record<string, AssetManifestEntry>;
  [key: string]: unknown;
}

/** Sandbox path of an asset file. */
export const assetLocalPath = (filename: string) => `${ASSET_FILES_DIR}/${filename}`;

/** Spec 2.9: blob pathname of a project asset. */
export const assetBlobPathname = (userId: string, projectId: string, filename: string) => `${userId}/${projectId}/assets/${filename}`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Parses manifest text. Text that is not a JSON object with an `assets` object (edited by hand or
 * by the app's code) is treated as an empty manifest, so uploads keep working; that is logged.
 */
export function parseAssetManifest(text: string, sandboxId: string): AssetManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (isObject(parsed) && isObject(parsed.assets)) return { ...parsed, assets: { ...parsed.assets } as AssetManifest["assets"] };
  log.warn("asset manifest is not a JSON object with an assets object; starting a new one", { sandboxId });
  return { ...(isObject(parsed) ? parsed : {}), assets: {} };
}

/** The sandbox's asset manifest; a missing file is an empty manifest. */
export async function readAssetManifest(sandbox: Sandbox): Promise<AssetManifest> {
  try {
    return parseAssetManifest(await sandbox.files.read(ASSET_MANIFEST_PATH), sandbox.sandboxId);
  } catch (error) {
    if (isSandboxError(error, FileNotFoundError)) return { assets: {} };
    throw error;
  }
}

/** True when the manifest has an entry under exactly this name. */
export const hasAsset = (manifest: AssetManifest, filename: string) => Object.hasOwn(manifest.assets, filename);

export const serializeAssetManifest = (manifest: AssetManifest) => `${JSON.stringify(manifest, null, 2)}\n`;
