/** One part of a hand-built multipart body; `body` may be a lazy sequence of chunks. */
export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  body: string | Uint8Array | Iterable<Uint8Array>;
}

/** Bytes pasted into the body as they are, to build malformed forms. */
export interface RawBytes {
  raw: string;
}

export interface MultipartBody {
  stream: ReadableStream<Uint8Array>;
  contentType: string;
  /** Bytes the consumer has pulled from the stream so far. */
  pulled(): number;
}

const encoder = new TextEncoder();

function* chunksOf(item: Part | RawBytes, boundary: string): Generator<Uint8Array> {
  if ("raw" in item) {
    yield encoder.encode(item.raw);
    return;
  }
  const disposition = `form-data; name="${item.name}"${item.filename === undefined ? "" : `; filename="${item.filename}"`}`;
  const type = item.contentType ? `\r\nContent-Type: ${item.contentType}` : "";
  yield encoder.encode(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`);
  if (typeof item.body === "string") yield encoder.encode(item.body);
  else if (item.body instanceof Uint8Array) yield item.body;
  else yield* item.body;
  yield encoder.encode("\r\n");
}

/**
 * A `multipart/form-data` body produced on demand, so multi-megabyte and malformed forms can be
 * sent without building them in memory. `close: false` leaves out the final boundary.
 */
export function multipartBody(items: (Part | RawBytes)[], options: { close?: boolean; boundary?: string } = {}): MultipartBody {
  const boundary = options.boundary ?? `----test${crypto.randomUUID().replaceAll("-", "")}`;
  let pulled = 0;
  function* all(): Generator<Uint8Array> {
    for (const item of items) yield* chunksOf(item, boundary);
    if (options.close !== false) yield encoder.encode(`--${boundary}--\r\n`);
  }
  const chunks = all();
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks.next();
        if (next.done) return controller.close();
        pulled += next.value.byteLength;
        controller.enqueue(next.value);
      },
    },
    // Nothing is produced before the consumer asks, so `pulled` counts only what it read.
    { highWaterMark: 0 },
  );
  return { stream, contentType: `multipart/form-data; boundary=${boundary}`, pulled: () => pulled };
}

/** A POST request streaming `body`, with extra headers (authorization, a forged content-length). */
export function streamingRequest(url: string, body: MultipartBody, headers: Record<string, string> = {}): Request {
  return new Request(url, {
    method: "POST",
    headers: { "content-type": body.contentType, ...headers },
    body: body.stream,
    duplex: "half",
  } as RequestInit);
}
