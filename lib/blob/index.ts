import path from "node:path";
import { type Config, getConfig } from "@/lib/config";
import { processSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { createFsBlobStore } from "./drivers/fs";
import { createS3BlobStore } from "./drivers/s3";
import { createVercelBlobStore } from "./drivers/vercel";
import type { BlobStore } from "./port";

export * from "./errors";
export { listAllBlobs } from "./list-all";
export { prepareBlobFile, putBlobFile } from "./put-file";
export type * from "./port";
export type { FsBlobStore } from "./drivers/fs";

/** Builds the driver `BLOB_DRIVER` selects; vendor SDKs load on the driver's first call. */
export function createBlobStore(config: Config): BlobStore {
  switch (config.BLOB_DRIVER) {
    case "fs":
      return createFsBlobStore({
        rootDir: path.join(config.DATA_DIR, "blobs"),
        publicBaseUrl: config.PUBLIC_BASE_URL,
        getSql: getStore,
      });
    case "vercel":
      return createVercelBlobStore({ token: config.BLOB_READ_WRITE_TOKEN });
    case "s3":
      return createS3BlobStore({
        bucket: config.S3_BUCKET ?? "",
        region: config.S3_REGION,
        endpoint: config.S3_ENDPOINT,
        accessKeyId: config.S3_ACCESS_KEY_ID,
        secretAccessKey: config.S3_SECRET_ACCESS_KEY,
        publicBaseUrl: config.S3_PUBLIC_BASE_URL,
        forcePathStyle: config.S3_FORCE_PATH_STYLE,
      });
  }
}

/** The process-wide blob store for the configured driver. */
export function getBlobStore(): BlobStore {
  return processSingleton("blobStore", () => createBlobStore(getConfig()));
}
