import { AppError } from "@/lib/errors";

/** What a JSON route reads at most: bigger bodies are refused (413) without being read further. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A body that sends nothing for this long is given up (408): a client trickling a body would
 * otherwise hold its request (and what it buffered) open for Node's 300 s request timeout.
 */
export const BODY_IDLE_TIMEOUT_MS = 30_000;

export class PayloadTooLargeError extends AppError {
  constructor(readonly limitBytes: number) {
    super(413, "payload_too_large", `The request body is larger than ${limitBytes} bytes.`);
  }
}

export class BodyTimeoutError extends AppError {
  constructor(idleMs: number) {
    super(408, "body_timeout", `The request body stalled: nothing arrived for ${idleMs / 1000} s.`);
  }
}

export interface ReadBodyOptions {
  /** @defaultValue {@link BODY_IDLE_TIMEOUT_MS} */
  idleTimeoutMs?: number;
}

/**
 * The body of `request`, read while counting: a Content-Length above `limitBytes`, or a stream
 * that passes it, throws PayloadTooLargeError at once (the rest is never read, so at most one
 * chunk beyond the limit is ever held); a pause longer than the idle timeout throws BodyTimeoutError.
 */
export async function readBodyWithin(request: Request, limitBytes: number, options: ReadBodyOptions = {}): Promise<Buffer<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  if (!request.body) return Buffer.alloc(0);
  const idleMs = options.idleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new BodyTimeoutError(idleMs)), idleMs);
      });
      const { done, value } = await Promise.race([reader.read(), stalled]).finally(() => clearTimeout(timer));
      if (done) break;
      total += value.byteLength;
      if (total > limitBytes) throw new PayloadTooLargeError(limitBytes);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  return Buffer.concat(chunks);
}

/** {@link readBodyWithin} as UTF-8 text. */
export async function readTextWithin(request: Request, limitBytes: number, options?: ReadBodyOptions): Promise<string> {
  return (await readBodyWithin(request, limitBytes, options)).toString("utf8");
}
