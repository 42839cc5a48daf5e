import type { BlobStore, ListBlobResultBlob } from "./port";

/**
 * Every blob under a prefix, following `cursor` across all pages (ordered by pathname). Stores
 * never list by time, so callers that need an order by `uploadedAt` sort the result themselves.
 */
export async function listAllBlobs(store: BlobStore, prefix: string): Promise<ListBlobResultBlob[]> {
  const all: ListBlobResultBlob[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ prefix, cursor });
    all.push(...page.blobs);
    cursor = page.hasMore ? page.cursor : undefined;
  } while (cursor);
  return all;
}
