import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { BlobStore, PreparedBlobFile, PutBlobResult, PutOptions } from "./port";

/**
 * Stores a finished host file (an upload's spool file) at `pathname` and removes it from
 * `hostPath`. A store with `putFile` (the fs driver) links it in, so its bytes are not written
 * again; the others upload it as a stream.
 */
export async function putBlobFile(store: BlobStore, pathname: string, hostPath: string, options: PutOptions): Promise<PutBlobResult> {
  if (store.putFile) return store.putFile(pathname, hostPath, options);
  try {
    return await store.put(pathname, createReadStream(hostPath), options);
  } finally {
    await rm(hostPath, { force: true });
  }
}

/**
 * Does what a put of a host file can do before its commit, so a caller can do it outside a lock
 * and keep only the commit inside: a store with `prepareFile` (the fs driver) makes the bytes
 * durable under a version nobody sees yet (fsyncs, directory entry included). The others make a
 * put visible as they upload, so theirs all happens in `put`. `hostPath` stays the caller's and must not change
 * until `put` or `discard` settled.
 */
export async function prepareBlobFile(store: BlobStore, hostPath: string): Promise<PreparedBlobFile> {
  if (store.prepareFile) return store.prepareFile(hostPath);
  return { put: (pathname, options) => store.put(pathname, createReadStream(hostPath), options), discard: async () => undefined };
}
