/** One slice of a stream cut for a multipart upload. */
export interface UploadPart {
  data: Buffer;
  /** True for the final part (which may be shorter, or empty for an empty stream). */
  last: boolean;
}

/**
 * Cuts a byte stream into parts of exactly `partSize` bytes (the last may be shorter), reading
 * only as fast as the consumer takes parts. Each part is copied into its own buffer, so at most
 * one part plus one input chunk is held in memory.
 */
export async function* readParts(source: AsyncIterable<Uint8Array | string>, partSize: number): AsyncGenerator<UploadPart> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let full: Buffer | null = null;
  for await (const input of source) {
    let chunk = typeof input === "string" ? Buffer.from(input) : input;
    while (chunk.length > 0) {
      // A full part is handed out only once more bytes prove it is not the last one.
      if (full) {
        yield { data: full, last: false };
        full = null;
      }
      const take = Math.min(partSize - pendingBytes, chunk.length);
      pending.push(chunk.subarray(0, take));
      pendingBytes += take;
      chunk = chunk.subarray(take);
      if (pendingBytes === partSize) {
        full = Buffer.concat(pending, partSize);
        pending = [];
        pendingBytes = 0;
      }
    }
  }
  if (full) yield { data: full, last: pendingBytes === 0 };
  if (!full || pendingBytes > 0) yield { data: Buffer.concat(pending, pendingBytes), last: true };
}

/**
 * Hands each part of `source` to `handle`, one at a time, and drops every reference to a part
 * before reading the next: a for-await loop (or a variable holding the last result) keeps the
 * previous part alive while the next one is read, doubling the memory held.
 */
export async function forEachPart(
  source: AsyncIterable<Uint8Array | string>,
  partSize: number,
  handle: (part: UploadPart) => Promise<void>,
): Promise<void> {
  const iterator = readParts(source, partSize);
  let next: IteratorResult<UploadPart> | null = await iterator.next();
  while (!next.done) {
    const handled = handle(next.value);
    next = null;
    await handled;
    next = await iterator.next();
  }
}
