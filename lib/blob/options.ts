import { Readable } from "node:stream";
import { contentDisposition, contentTypeForPathname, dispositionTypeFor, validateContentType } from "./content-type";
import { BlobOptionsError } from "./errors";
import { type BlobUrls, fileNameOf, validatePathname, validatePrefix, withRandomSuffix } from "./pathname";
import type { BlobBody, ListOptions, PutBlobResult, PutOptions } from "./port";

/** Vercel Blob's default: one month. */
export const DEFAULT_CACHE_CONTROL_MAX_AGE = 30 * 24 * 60 * 60;
/** Vercel Blob refuses less than a minute. */
export const MIN_CACHE_CONTROL_MAX_AGE = 60;
export const DEFAULT_LIST_LIMIT = 1000;
export const MAX_LIST_LIMIT = 1000;

/** Everything a self-managed store (fs, S3) records for a put, decided before any byte moves. */
export interface PreparedPut {
  /** Final pathname, random suffix included. */
  pathname: string;
  contentType: string;
  contentDisposition: string;
  cacheControl: string;
  cacheControlMaxAge: number;
  allowOverwrite: boolean;
}

/** Validates the put options shared by every driver (pathname, access, content type, max age). */
export function validatePutOptions(pathname: string, options: PutOptions): void {
  validatePathname(pathname);
  if (options?.access !== "public") throw new BlobOptionsError('access must be "public".');
  if (options.contentType !== undefined) validateContentType(options.contentType);
  const maxAge = options.cacheControlMaxAge;
  if (maxAge !== undefined && (!Number.isInteger(maxAge) || maxAge < MIN_CACHE_CONTROL_MAX_AGE)) {
    throw new BlobOptionsError(`cacheControlMaxAge must be an integer of at least ${MIN_CACHE_CONTROL_MAX_AGE} seconds.`);
  }
}

/** Validates a put and fixes its final pathname and headers, Vercel Blob's way. */
export function preparePut(pathname: string, options: PutOptions): PreparedPut {
  validatePutOptions(pathname, options);
  const contentType = options.contentType ?? contentTypeForPathname(pathname);
  const cacheControlMaxAge = options.cacheControlMaxAge ?? DEFAULT_CACHE_CONTROL_MAX_AGE;
  return {
    pathname: options.addRandomSuffix ? withRandomSuffix(pathname) : pathname,
    contentType,
    // Like Vercel's server-side put, the file name is the one the caller chose, without suffix.
    contentDisposition: contentDisposition(dispositionTypeFor(contentType), fileNameOf(pathname)),
    cacheControl: `public, max-age=${cacheControlMaxAge}`,
    cacheControlMaxAge,
    allowOverwrite: options.allowOverwrite ?? false,
  };
}

/** The put result of a store that decides pathnames and headers itself (fs, S3). */
export function toPutResult(urls: BlobUrls, prepared: PreparedPut, etag: string): PutBlobResult {
  return {
    url: urls.urlFor(prepared.pathname),
    downloadUrl: urls.downloadUrlFor(prepared.pathname),
    pathname: prepared.pathname,
    contentType: prepared.contentType,
    contentDisposition: prepared.contentDisposition,
    etag,
  };
}

/** Validated list options with the default limit applied. */
export function resolveListOptions(options: ListOptions = {}): { prefix?: string; limit: number; cursor?: string } {
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new BlobOptionsError(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`);
  }
  if (options.cursor !== undefined && (typeof options.cursor !== "string" || options.cursor === "")) {
    throw new BlobOptionsError("cursor must be the non-empty string returned by the previous list call.");
  }
  return {
    prefix: options.prefix ? validatePrefix(options.prefix) : undefined,
    limit,
    cursor: options.cursor,
  };
}

const isNodeReadable = (value: unknown): value is Readable =>
  value instanceof Readable || (typeof value === "object" && value !== null && typeof (value as Readable).pipe === "function" && typeof (value as Readable).read === "function");

/**
 * A put body as bytes already in memory (Buffer) or as a Node stream read on demand; throws
 * `BlobOptionsError` for anything else.
 */
export function normalizeBody(body: BlobBody): Buffer | Readable {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (isNodeReadable(body)) return body;
  if (typeof Blob !== "undefined" && body instanceof Blob) return Readable.fromWeb(body.stream() as never);
  if (typeof ReadableStream !== "undefined" && body instanceof ReadableStream) return Readable.fromWeb(body as never);
  throw new BlobOptionsError("The body must be a string, Buffer, Uint8Array, ArrayBuffer, Blob or stream.");
}
