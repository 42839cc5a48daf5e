import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";

/** What a JSON route reads at most: bigger bodies are refused (413) without being read further. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

export class PayloadTooLargeError extends AppError {
  constructor(readonly limitBytes: number) {
    super(413, "payload_too_large", `The request body is larger than ${limitBytes} bytes.`);
  }
}

export class BodyTimeoutError extends AppError {
  constructor(why: string) {
    super(408, "body_timeout", `The request body was given up: ${why}.`);
  }
}

/** The client went away (or its connection broke) before the whole body arrived. */
export class BodyIncompleteError extends AppError {
  constructor(cause: unknown) {
    super(400, "body_incomplete", "The request body ended before it was complete.", { cause });
  }
}

export interface ReadBodyOptions {
  /** Longest pause between two chunks. @defaultValue config BODY_IDLE_TIMEOUT_MS */
  idleTimeoutMs?: number;
  /** Longest time the whole body may take, however steadily it trickles. @defaultValue config BODY_TOTAL_TIMEOUT_MS */
  totalTimeoutMs?: number;
}

/**
 * The body of `request`, read while counting: a Content-Length above `limitBytes`, or a stream
 * that passes it, throws PayloadTooLargeError at once (the rest is never read, so at most one
 * chunk beyond the limit is ever held); a pause longer than the idle timeout, or a body still
 * arriving at the total deadline, throws BodyTimeoutError; a body whose stream breaks (the client
 * went away) throws BodyIncompleteError.
 */
export async function readBodyWithin(request: Request, limitBytes: number, options: ReadBodyOptions = {}): Promise<Buffer<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  if (!request.body) return Buffer.alloc(0);
  const config = getConfig();
  const idleMs = options.idleTimeoutMs ?? config.BODY_IDLE_TIMEOUT_MS;
  const totalMs = options.totalTimeoutMs ?? config.BODY_TOTAL_TIMEOUT_MS;
  const deadline = performance.now() + totalMs;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const remainingMs = deadline - performance.now();
      const timeout =
        idleMs <= remainingMs
          ? { afterMs: idleMs, error: () => new BodyTimeoutError(`nothing arrived for ${idleMs / 1000} s`) }
          : { afterMs: Math.max(0, remainingMs), error: () => new BodyTimeoutError(`it was still arriving after ${totalMs / 1000} s`) };
      const { done, value } = await nextChunk(reader, timeout.afterMs, timeout.error);
      if (done) break;
      total += value.byteLength;
      if (total > limitBytes) throw new PayloadTooLargeError(limitBytes);
      chunks.push(value);
    }
  } catch (error) {
    // Not awaited: cancelling a stalled source can itself stay pending for good.
    reader.cancel().catch(() => undefined);
    throw error;
  }
  return Buffer.concat(chunks);
}

/** The next chunk of `reader`, or `timedOut()` thrown after `afterMs`; a broken stream is a BodyIncompleteError. */
async function nextChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  afterMs: number,
  timedOut: () => BodyTimeoutError,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  const read = reader.read().catch((error: unknown) => {
    log.info("a request body ended before it was complete (the client went away)", { error });
    throw new BodyIncompleteError(error);
  });
  // When the timeout wins, the read may still fail later (the stream is cancelled or breaks): not unhandled.
  read.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), afterMs);
  });
  try {
    return await Promise.race([read, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/** {@link readBodyWithin} as UTF-8 text. */
export async function readTextWithin(request: Request, limitBytes: number, options?: ReadBodyOptions): Promise<string> {
  return (await readBodyWithin(request, limitBytes, options)).toString("utf8");
}
