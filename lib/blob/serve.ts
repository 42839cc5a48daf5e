import { jsonError } from "@/lib/http";
import { isScriptCapable } from "./content-type";
import { isFsBlobStore } from "./drivers/fs";
import type { ByteRange } from "./drivers/fs-files";
import { BlobPathnameError } from "./errors";
import type { BlobStore, HeadBlobResult } from "./port";

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

/** RFC 9110 13.1.2/13.1.3: If-None-Match wins; If-Modified-Since only applies without it. */
function isNotModified(request: Request, blob: HeadBlobResult): boolean {
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch !== null) return etagMatches(ifNoneMatch, blob.etag);
  const since = Date.parse(request.headers.get("if-modified-since") ?? "");
  return !Number.isNaN(since) && wholeSeconds(blob.uploadedAt) <= Math.floor(since / 1000);
}

/** If-Range: the range applies only while the client's validator is still current. */
function rangeStillValid(request: Request, blob: HeadBlobResult): boolean {
  const ifRange = request.headers.get("if-range");
  if (ifRange === null) return true;
  if (ifRange.startsWith('"')) return ifRange === blob.etag;
  const date = Date.parse(ifRange);
  return !Number.isNaN(date) && wholeSeconds(blob.uploadedAt) === Math.floor(date / 1000);
}

function baseHeaders(blob: HeadBlobResult, download: boolean): Headers {
  const headers = new Headers({
    "content-type": blob.contentType,
    etag: blob.etag,
    "last-modified": httpDate(blob.uploadedAt),
    "cache-control": blob.cacheControl,
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    // Apps on other origins (Expo web, previews) embed these files.
    "cross-origin-resource-policy": "cross-origin",
    "content-disposition": download ? blob.contentDisposition.replace(/^inline/, "attachment") : blob.contentDisposition,
  });
  if (isScriptCapable(blob.contentType)) headers.set("content-security-policy", SANDBOX_CSP);
  return headers;
}

/**
 * Answers GET/HEAD for a blob of the fs driver: streamed body, validators, conditional requests
 * (304), single byte ranges (206/416), `?download=1`, and a 404 JSON body when missing (or when
 * another driver serves blobs from its own URLs).
 */
export async function serveBlob(request: Request, store: BlobStore, pathname: string): Promise<Response> {
  const notFound = () => jsonError(404, "blob_not_found", "No blob exists at this address.");
  if (!isFsBlobStore(store)) return notFound();
  let opened;
  try {
    opened = await store.open(pathname);
  } catch (error) {
    if (error instanceof BlobPathnameError) return notFound();
    throw error;
  }
  if (!opened) return notFound();
  const { blob } = opened;
  const headers = baseHeaders(blob, new URL(request.url).searchParams.get("download") === "1");

  if (isNotModified(request, blob)) {
    await opened.close();
    for (const name of ["content-type", "content-disposition", "accept-ranges"]) headers.delete(name);
    return new Response(null, { status: 304, headers });
  }

  const range = request.method === "GET" && rangeStillValid(request, blob) ? parseRange(request.headers.get("range"), blob.size) : null;
  if (range === "unsatisfiable") {
    await opened.close();
    return jsonError(416, "range_not_satisfiable", "The requested range is outside the blob.", {
      "content-range": `bytes */${blob.size}`,
    });
  }

  const { start, end } = range ?? { start: 0, end: blob.size - 1 };
  headers.set("content-length", String(end - start + 1));
  if (range) headers.set("content-range", `bytes ${start}-${end}/${blob.size}`);
  if (request.method === "HEAD") {
    await opened.close();
    return new Response(null, { status: 200, headers });
  }
  return new Response(opened.stream({ start, end }), { status: range ? 206 : 200, headers });
}
