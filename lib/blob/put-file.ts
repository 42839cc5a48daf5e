import { createReadStream } from "node:fs";
import { open, rm } from "node:fs/promises";
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

/**
 * Starts writing a host file's bytes to disk ahead of its {@link putBlobFile}, so the caller can do
 * other I/O meanwhile (an asset's sandbox copy). The fs driver adopts the file and fsyncs it
 * before committing; that fsync then finds the bytes already written. The other drivers read the
 * file instead, so nothing is done for them. Never rejects: a disk failure here is reported again
 * by the put's own fsync, which is the one that decides.
 */
export async function flushBlobFile(store: BlobStore, hostPath: string): Promise<void> {
  if (!isFsBlobStore(store)) return;
  try {
    const handle = await open(hostPath, "r");
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  } catch {
    // See above: the put reports it.
  }
}
