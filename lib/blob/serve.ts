import type { IncomingMessage, ServerResponse } from "node:http";
import { jsonError } from "@/lib/http";
import { isScriptCapable } from "./content-type";
import { BlobPathnameError } from "./errors";
import type { BlobStore, ByteRange, HeadBlobResult, OpenedBlob } from "./port";

/**
 * Sandboxes documents we serve from our own origin: a user SVG or HTML file opened directly
 * gets an opaque origin and no script, so it can never read the app's cookies or storage.
 * Embedding with <img> is unaffected.
 */
export const SANDBOX_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/**
 * Parses a single-range `Range: bytes=...` header against `size`. Returns null when the header
 * should be ignored (absent, malformed, several ranges: the full body is sent) and
 * "unsatisfiable" for ranges outside the blob (416).
 */
export function parseRange(header: string | null, size: number): ByteRange | "unsatisfiable" | null {
  const match = header?.match(/^bytes=(\d*)-(\d*)$/);
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size) return "unsatisfiable";
  if (end < start) return null;
  return { start, end };
}

const httpDate = (date: Date) => date.toUTCString();
// HTTP dates have one-second resolution.
const wholeSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

function etagMatches(header: string, etag: string): boolean {
  return header.split(",").some((candidate) => {
    const value = candidate.trim().replace(/^W\//, "");
    return value === "*" || value === etag;
  });
}

/** The parts of a blob request that decide the answer, whichever server received it. */
interface BlobRequest {
  method: string;
  /** `?download=1`: serve as an attachment. */
  download: boolean;
  header(name: string): string | null;
}

/** RFC 9110 13.1.2/13.1.3: If-None-Match wins; If-Modified-Since only applies without it. */
function isNotModified(request: BlobRequest, blob: HeadBlobResult): boolean {
  const ifNoneMatch = request.header("if-none-match");
  if (ifNoneMatch !== null) return etagMatches(ifNoneMatch, blob.etag);
  const since = Date.parse(request.header("if-modified-since") ?? "");
  return !Number.isNaN(since) && wholeSeconds(blob.uploadedAt) <= Math.floor(since / 1000);
}

/** If-Range: the range applies only while the client's validator is still current. */
function rangeStillValid(request: BlobRequest, blob: HeadBlobResult): boolean {
  const ifRange = request.header("if-range");
  if (ifRange === null) return true;
  if (ifRange.startsWith('"')) return ifRange === blob.etag;
  const date = Date.parse(ifRange);
  return !Number.isNaN(date) && wholeSeconds(blob.uploadedAt) === Math.floor(date / 1000);
}

// A plain record, not `Headers`: the Node path writes it as is, without header validation per request.
function baseHeaders(blob: HeadBlobResult, download: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": blob.contentType,
    etag: blob.etag,
    "last-modified": httpDate(blob.uploadedAt),
    "cache-control": blob.cacheControl,
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    // Apps on other origins (Expo web, previews) embed these files.
    "cross-origin-resource-policy": "cross-origin",
    "content-disposition": download ? blob.contentDisposition.replace(/^inline/, "attachment") : blob.contentDisposition,
  };
  if (isScriptCapable(blob.contentType)) headers["content-security-policy"] = SANDBOX_CSP;
  return headers;
}

/** The answer to a blob request before it is written: an error, or headers and maybe bytes. */
type BlobAnswer =
  | { kind: "error"; status: number; code: string; message: string; headers?: Record<string, string> }
  | { kind: "blob"; status: 200 | 206 | 304; headers: Record<string, string>; body?: { opened: OpenedBlob; range: ByteRange } };

const notFound: BlobAnswer = { kind: "error", status: 404, code: "blob_not_found", message: "No blob exists at this address." };

/**
 * Decides the answer for a blob of the fs driver: validators, conditional requests (304), single
 * byte ranges (206/416), `?download=1`, HEAD, and 404 when missing (or when another driver serves
 * blobs from its own URLs). The file stays open only when bytes are to be sent.
 */
async function answerBlobRequest(request: BlobRequest, store: BlobStore, pathname: string): Promise<BlobAnswer> {
  if (!store.open) return notFound;
  let opened;
  try {
    opened = await store.open(pathname);
  } catch (error) {
    if (error instanceof BlobPathnameError) return notFound;
    throw error;
  }
  if (!opened) return notFound;
  const { blob } = opened;
  const headers = baseHeaders(blob, request.download);

  if (isNotModified(request, blob)) {
    await opened.close();
    for (const name of ["content-type", "content-disposition", "accept-ranges"]) delete headers[name];
    return { kind: "blob", status: 304, headers };
  }

  const range = request.method === "GET" && rangeStillValid(request, blob) ? parseRange(request.header("range"), blob.size) : null;
  if (range === "unsatisfiable") {
    await opened.close();
    return {
      kind: "error",
      status: 416,
      code: "range_not_satisfiable",
      message: "The requested range is outside the blob.",
      headers: { "content-range": `bytes */${blob.size}` },
    };
  }

  const { start, end } = range ?? { start: 0, end: blob.size - 1 };
  headers["content-length"] = String(end - start + 1);
  if (range) headers["content-range"] = `bytes ${start}-${end}/${blob.size}`;
  if (request.method === "HEAD") {
    await opened.close();
    return { kind: "blob", status: 200, headers };
  }
  return { kind: "blob", status: range ? 206 : 200, headers, body: { opened, range: { start, end } } };
}

/** Answers GET/HEAD for a blob as a web Response (the Next.js route handler). */
export async function serveBlob(request: Request, store: BlobStore, pathname: string): Promise<Response> {
  const answer = await answerBlobRequest(
    {
      method: request.method,
      download: new URL(request.url).searchParams.get("download") === "1",
      header: (name) => request.headers.get(name),
    },
    store,
    pathname,
  );
  if (answer.kind === "error") return jsonError(answer.status, answer.code, answer.message, answer.headers);
  const body = answer.body ? answer.body.opened.stream(answer.body.range) : null;
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * Answers GET/HEAD for a blob straight on Node's response (the fast path in front of Next.js,
 * see `fast-path.ts`): the same answer as `serveBlob`, with Content-Length kept and no web
 * streams between the file and the socket.
 */
export async function sendBlob(
  request: IncomingMessage,
  response: ServerResponse,
  store: BlobStore,
  pathname: string,
  download: boolean,
): Promise<void> {
  const answer = await answerBlobRequest(
    {
      method: request.method ?? "GET",
      download,
      header: (name) => {
        const value = request.headers[name];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    store,
    pathname,
  );
  if (answer.kind === "error") {
    // Rare: built through the one JSON error shape rather than a second copy of it.
    const error = jsonError(answer.status, answer.code, answer.message, answer.headers);
    const bytes = Buffer.from(await error.arrayBuffer());
    response.writeHead(answer.status, { ...Object.fromEntries(error.headers), "content-length": String(bytes.length) });
    response.end(bytes);
    return;
  }
  if (!answer.body) {
    response.writeHead(answer.status, answer.headers);
    response.end();
    return;
  }
  await sendRange(answer.body.opened, answer.body.range, response, () => response.writeHead(answer.status, answer.headers));
}

const SEND_CHUNK_BYTES = 256 * 1024;
const POOLED_BUFFERS = 32;
// Read buffers are reused: fresh ones per chunk are external memory, and in a process as big as
// the server every few megabytes of it set off a full garbage collection.
const bufferPool: Buffer[] = [];

/**
 * Writes `chunk` (ending the response with it when `last`) and resolves once it is handed to the
 * socket, so its buffer may be refilled; rejects when the client leaves first.
 */
const written = (response: ServerResponse, chunk: Buffer, last: boolean) =>
  new Promise<void>((resolve, reject) => {
    const closed = () => reject(new Error("The client closed the connection."));
    response.once("close", closed);
    const done = (error?: Error | null) => {
      response.off("close", closed);
      if (error) reject(error);
      else resolve();
    };
    if (last) response.end(chunk, done);
    else response.write(chunk, done);
  });

/**
 * Sends `range` of the blob chunk by chunk through one pooled buffer, each chunk written out
 * before the buffer is refilled; the head goes out only once the first read succeeded, so a
 * failed read still gets its error answer. Closes the file.
 */
async function sendRange(opened: OpenedBlob, range: ByteRange, response: ServerResponse, writeHead: () => void): Promise<void> {
  const buffer = bufferPool.pop() ?? Buffer.allocUnsafeSlow(SEND_CHUNK_BYTES);
  try {
    let position = range.start;
    let headWritten = false;
    while (position <= range.end) {
      const bytesRead = await opened.read(buffer, Math.min(SEND_CHUNK_BYTES, range.end + 1 - position), position);
      if (bytesRead === 0) break;
      if (!headWritten) writeHead();
      headWritten = true;
      position += bytesRead;
      // The last chunk ends the response in the same write: a small blob is one write with its head.
      await written(response, buffer.subarray(0, bytesRead), position > range.end);
    }
    if (position <= range.end) throw new Error("The blob's file is shorter than its recorded size.");
    // An empty blob: the head alone.
    if (!headWritten) {
      writeHead();
      response.end();
    }
  } finally {
    await opened.close();
    if (bufferPool.length < POOLED_BUFFERS) bufferPool.push(buffer);
  }
}
