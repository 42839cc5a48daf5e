import crypto from "node:crypto";
import fs from "node:fs";
import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import busboy from "busboy";
import { MalformedUploadError, UploadTooLargeError } from "./errors";

/** Spec 8: the largest file accepted, for assets and chat images alike. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Room for part headers and the small fields next to the file when checking Content-Length. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/**
 * How much of a refused body is still read and discarded rather than cancelled. Cancelling a
 * request body whose last bytes already arrived makes Node's fetch close the cancelled stream
 * again ("ReadableStream is already closed", an uncaughtException); a body that passed the
 * Content-Length check has at most the multipart overhead left when its file crosses the limit.
 */
const DISCARD_BEFORE_CANCEL_BYTES = 2 * MULTIPART_OVERHEAD_BYTES;
/**
 * How much of the file the spool may hold in memory before the parser waits for the disk. With
 * the stream default (16 KB) every socket chunk waited for its own write; a larger buffer lets
 * the parser run ahead and the spool write what queued up in one `writev` (bench/upload.ts: from
 * about 45 % to 70-90 % of a plain Node server's MB/s). Memory per upload stays bounded by it.
 */
const SPOOL_BUFFER_BYTES = 1024 * 1024;

export interface ReceiveOptions {
  /** Name of the multipart field that carries the file. */
  fileField: string;
  /** Largest file accepted; one byte more ends the request with 413 while it is still arriving. */
  maxFileBytes: number;
  /** Host directory the file is spooled to while the request is read; created when missing. */
  spoolDir: string;
}

/** The file part of a form, spooled to a host file that is deleted when the handler returns. */
export interface ReceivedFile {
  /** Host path of the spooled bytes. */
  path: string;
  /** The filename the client sent (unsanitised, path already stripped by the parser). */
  filename: string;
  /** The MIME type the client declared; informative only, never trusted. */
  declaredType: string;
  size: number;
  /** SHA-256 of the bytes (hex), computed while they were spooled. */
  sha256: string;
}

/**
 * A multipart body to read: the request's headers, its bytes as a Node stream, and how to stop
 * it when too much of a refused body is left to read.
 */
export interface FormSource {
  headers: Headers;
  /** The body, opened when the parser is ready to take it (null without one). */
  openBody(): Readable | null;
  abandon(): void;
}

/** The body of a fetch Request (Next.js routes); abandoning it cancels the rest of the upload. */
export function formSourceOfRequest(request: Request): FormSource {
  // Converted only once listeners can be attached: the Node stream reports a failed body at once.
  let body: Readable | null = null;
  return {
    headers: request.headers,
    openBody: () => (body ??= request.body ? Readable.fromWeb(request.body as NodeWebReadableStream<Uint8Array>) : null),
    abandon: () => body?.destroy(),
  };
}

/**
 * The body of a Node request (the custom server's fast path), read with no web-stream hop.
 * Abandoning it leaves the rest unread: destroying it would destroy the socket before the 413
 * is written, so the answer closes the connection instead (see lib/http `writeResponse`).
 */
export function formSourceOfNodeRequest(request: IncomingMessage, headers: Headers): FormSource {
  return { headers, openBody: () => request, abandon: () => request.pause() };
}

export interface ReceivedForm {
  /** Text fields by name; a repeated field keeps its last value. */
  fields: Record<string, string>;
  /** Undefined when the form had no file part named `fileField`. */
  file?: ReceivedFile;
}

/**
 * Reads a `multipart/form-data` request body as a stream: the file goes straight to a spool
 * file on disk (never buffered whole), and reading stops with {@link UploadTooLargeError} (413)
 * as soon as it grows past `maxFileBytes`. A body that is not a well-formed form, or that carries
 * more than one file or oversized fields, is a {@link MalformedUploadError} (400). `handle` runs
 * with the parsed form; the spool file is deleted when it settles, whatever happened.
 */
export async function withReceivedForm<T>(
  source: FormSource,
  options: ReceiveOptions,
  handle: (form: ReceivedForm) => Promise<T>,
): Promise<T> {
  const declaredLength = Number(source.headers.get("content-length"));
  if (declaredLength > options.maxFileBytes + MULTIPART_OVERHEAD_BYTES) throw new UploadTooLargeError(options.maxFileBytes);
  await fs.promises.mkdir(options.spoolDir, { recursive: true });
  const spoolPath = path.join(options.spoolDir, `${crypto.randomUUID()}.upload`);
  try {
    return await handle(await parseForm(source, options, spoolPath));
  } finally {
    await fs.promises.rm(spoolPath, { force: true });
  }
}

function createParser(headers: Headers, options: ReceiveOptions): busboy.Busboy {
  try {
    return busboy({
      headers: { "content-type": headers.get("content-type") ?? "" },
      // Browsers send UTF-8 filenames without RFC 5987 encoding.
      defParamCharset: "utf8",
      // busboy reports the limit when a file reaches it, so allow one byte more than the maximum.
      limits: { fileSize: options.maxFileBytes + 1, files: 1, fields: 10, fieldSize: 1024, parts: 12 },
    });
  } catch (error) {
    throw new MalformedUploadError("The request must be multipart/form-data with a boundary.", { cause: error });
  }
}

async function parseForm(form: FormSource, options: ReceiveOptions, spoolPath: string): Promise<ReceivedForm> {
  const source = form.openBody();
  if (!source) throw new MalformedUploadError("The request has no body.");
  // A client that went away while the spool directory was made: nothing more will arrive.
  if (source.destroyed) throw new MalformedUploadError("The request body could not be read.");
  const parser = createParser(form.headers, options);
  const received: ReceivedForm = { fields: {} };
  let fileStream: Readable | undefined;
  let sink: fs.WriteStream | undefined;
  let spooling: Promise<void> = Promise.resolve();

  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("field", (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) reject(new MalformedUploadError(`The form field ${JSON.stringify(name.slice(0, 100))} is too long.`));
      else received.fields[name] = value;
    });
    parser.on("file", (name, stream, info) => {
      if (name !== options.fileField) {
        stream.resume();
        return;
      }
      fileStream = stream;
      stream.on("limit", () => reject(new UploadTooLargeError(options.maxFileBytes)));
      const spool = fs.createWriteStream(spoolPath, { highWaterMark: SPOOL_BUFFER_BYTES });
      sink = spool;
      let diskFailed = false;
      spool.on("error", () => (diskFailed = true));
      // Hashed on the way to disk, so the file is never read back whole.
      const hash = crypto.createHash("sha256");
      stream.on("data", (chunk: Buffer) => hash.update(chunk));
      spooling = pipeline(stream, spool).then(
        () => {
          const sha256 = hash.digest("hex");
          received.file = { path: spoolPath, filename: info.filename ?? "", declaredType: info.mimeType, size: spool.bytesWritten, sha256 };
        },
        (error: unknown) => {
          // A disk failure is ours (500); anything else is the client's body ending badly.
          const failure = diskFailed ? error : new MalformedUploadError("The file part ended unexpectedly.", { cause: error });
          reject(failure);
          throw failure;
        },
      );
      // Awaited below; this only keeps an early failure from counting as unhandled meanwhile.
      spooling.catch(() => undefined);
    });
    parser.on("filesLimit", () => reject(new MalformedUploadError("Send exactly one file per request.")));
    parser.on("fieldsLimit", () => reject(new MalformedUploadError("The form has too many fields.")));
    parser.on("partsLimit", () => reject(new MalformedUploadError("The form has too many parts.")));
    parser.on("error", (error) => reject(new MalformedUploadError(`The multipart body is malformed: ${(error as Error).message}.`, { cause: error })));
    parser.on("close", resolve);
    source.on("error", (error) => reject(new MalformedUploadError("The request body could not be read.", { cause: error })));
  });
  source.pipe(parser);

  try {
    await parsed;
    await spooling;
    return received;
  } catch (error) {
    // Stop reading the request and let the spool file close before the caller deletes it. Both
    // ends of the spool pipeline are destroyed: Node 20's pipeline does not always settle when
    // only a paused source is.
    source.unpipe(parser);
    fileStream?.destroy();
    sink?.destroy();
    await discardRest(source, form, DISCARD_BEFORE_CANCEL_BYTES);
    await spooling.catch(() => undefined);
    // The spool file is opened asynchronously: wait until it is closed, or it could be created
    // after the caller deleted it (seen on a loaded machine).
    if (sink && !sink.closed) await once(sink, "close").catch(() => undefined);
    throw error;
  }
}

/** Reads and drops what is left of the body when that is at most `maxBytes`; otherwise abandons it. */
async function discardRest(source: Readable, form: FormSource, maxBytes: number): Promise<void> {
  if (source.readableEnded || source.destroyed) return;
  let discarded = 0;
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded <= maxBytes) return;
      source.off("data", onData);
      form.abandon();
      resolve();
    };
    source.on("data", onData);
    source.once("end", resolve);
    source.once("close", resolve);
    source.once("error", resolve);
    source.resume();
  });
}
