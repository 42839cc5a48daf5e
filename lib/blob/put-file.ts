import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { isFsBlobStore } from "./drivers/fs";
import type { BlobStore, PutBlobResult, PutOptions } from "./port";

/**
 * Stores a finished host file (an upload's spool file) at `pathname` and removes it from
 * `hostPath`. The fs driver renames it into the store, so its bytes are not written again; the
 * other drivers upload it as a stream.
 */
export async function putBlobFile(store: BlobStore, pathname: string, hostPath: string, options: PutOptions): Promise<PutBlobResult> {
  if (isFsBlobStore(store)) return store.putFile(pathname, hostPath, options);
  try {
    return await store.put(pathname, createReadStream(hostPath), options);
  } finally {
    await rm(hostPath, { force: true });
  }
}
