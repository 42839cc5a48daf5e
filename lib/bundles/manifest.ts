import crypto from "node:crypto";
import { assetHash } from "@/lib/updates/asset-hash";

/**
 * The Expo Updates protocol v1 manifest (docs.expo.dev/technical-specs/expo-updates-1), stored
 * as `<platform>/manifest.json` next to the bundle it launches.
 */
export interface UpdateManifest {
  /** A UUID: the iOS client refuses any other id. */
  id: string;
  /** ISO 8601; clients pick the most recent update. */
  createdAt: string;
  /** Which native build can run this update; from the app config. */
  runtimeVersion: string;
  launchAsset: ManifestAsset;
  assets: ManifestAsset[];
  /** String values only (the protocol's manifest filters read them). */
  metadata: Record<string, string>;
  extra: Record<string, unknown>;
}

export interface ManifestAsset {
  /** Base64URL (RFC 4648 §5, unpadded) SHA-256 of the file's bytes. */
  hash: string;
  /** How the update's code refers to the asset. */
  key: string;
  contentType: string;
  /** Starts with `.`. Absent on the launch asset: the protocol says clients ignore it there. */
  fileExtension?: string;
  url: string;
}

const md5Hex = (bytes: Uint8Array): string => crypto.createHash("md5").update(bytes).digest("hex");

/**
 * A UUID (RFC 9562 version 8, "custom") from a SHA-256 of the parts: the same project, platform,
 * commit and content give the same id, so a client that has an update never downloads it again,
 * and any change of content gives a new one.
 */
export function contentUuid(parts: string[]): string {
  const bytes = crypto.createHash("sha256").update(parts.join("\n")).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An exported file as the manifest needs it: its bytes and where it was uploaded. */
export interface UploadedFile {
  bytes: Uint8Array;
  url: string;
}

export interface UploadedAsset extends UploadedFile {
  /** The asset's file name in the export (`assets/<key>`), which the bundle refers to. */
  key: string;
  /** The asset map's `type`: the extension without its dot, e.g. `png`. */
  type: string;
  contentType: string;
}

export interface ManifestInput {
  projectId: string;
  /** The platform the launch asset was exported for (`metadata.platform`). */
  platform: string;
  commitSha: string;
  commitMessage: string;
  runtimeVersion: string;
  createdAt: Date;
  launchAsset: UploadedFile;
  assets: UploadedAsset[];
  /** The app config, shipped as `extra.expoClient` so `Constants.expoConfig` works in updates. */
  expoConfig?: Record<string, unknown>;
}

/** Builds the manifest of an uploaded export. */
export function createUpdateManifest(input: ManifestInput): UpdateManifest {
  const launchHash = assetHash(input.launchAsset.bytes);
  const assets = input.assets.map((asset) => ({
    hash: assetHash(asset.bytes),
    key: asset.key,
    contentType: asset.contentType,
    fileExtension: `.${asset.type}`,
    url: asset.url,
  }));
  return {
    // The platform too: each platform's update is its own, even where the bytes are the same.
    id: contentUuid([input.projectId, input.platform, input.commitSha, input.runtimeVersion, launchHash, ...assets.map((asset) => asset.hash)]),
    createdAt: input.createdAt.toISOString(),
    runtimeVersion: input.runtimeVersion,
    launchAsset: {
      hash: launchHash,
      key: md5Hex(input.launchAsset.bytes),
      contentType: "application/javascript",
      url: input.launchAsset.url,
    },
    assets,
    metadata: { platform: input.platform, commitSha: input.commitSha, commitMessage: input.commitMessage },
    extra: input.expoConfig ? { expoClient: input.expoConfig } : {},
  };
}
