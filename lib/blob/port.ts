import type { Readable } from "node:stream";

/**
 * The blob store port. Semantics follow `@vercel/blob` 2.x: pathnames are keys, `list` is ordered
 * by pathname, puts refuse to overwrite unless asked, deleting a missing blob is not an error.
 * Drivers: `drivers/fs.ts` (default), `drivers/vercel.ts`, `drivers/s3.ts`.
 */

export type BlobDriverName = "fs" | "vercel" | "s3";

/**
 * What `put` accepts. Streams (web or Node) are uploaded as they are read, never buffered whole;
 * strings are stored as UTF-8.
 */
export type BlobBody = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | Readable;

export interface PutOptions {
  /** Every blob of the product is public; anything else is refused. */
  access: "public";
  /**
   * Inserts `-<30 random alphanumerics>` before the extension of the last segment, so
   * concurrent uploads of the same name never collide.
   * @defaultValue false
   */
  addRandomSuffix?: boolean;
  /**
   * Replaces an existing blob at the same pathname. Without it such a put fails with
   * `BlobAlreadyExistsError`. Fixed-path writes (assets, screenshots, bundles) pass true.
   * @defaultValue false
   */
  allowOverwrite?: boolean;
  /** MIME type; detected from the pathname's extension when omitted (`application/octet-stream` if unknown). */
  contentType?: string;
  /**
   * Seconds browsers and CDNs may cache the blob; at least 60.
   * @defaultValue 2592000 (30 days)
   */
  cacheControlMaxAge?: number;
}

export interface PutBlobResult {
  url: string;
  /** `url` with `?download=1`: served as an attachment. */
  downloadUrl: string;
  /** The stored pathname, random suffix included. */
  pathname: string;
  contentType: string;
  contentDisposition: string;
  etag: string;
}

export interface HeadBlobResult {
  url: string;
  downloadUrl: string;
  pathname: string;
  size: number;
  uploadedAt: Date;
  contentType: string;
  contentDisposition: string;
  /** The Cache-Control header value, e.g. `public, max-age=2592000`. */
  cacheControl: string;
  etag: string;
}

export interface ListOptions {
  /** Only pathnames starting with this string (byte-wise; `bundles/p1/` does not match `bundles/p10/`). */
  prefix?: string;
  /**
   * Page size, 1 to 1000.
   * @defaultValue 1000
   */
  limit?: number;
  /** The opaque `cursor` of the previous page. */
  cursor?: string;
}

export interface ListBlobResultBlob {
  url: string;
  downloadUrl: string;
  pathname: string;
  size: number;
  uploadedAt: Date;
  etag: string;
}

export interface ListBlobResult {
  /** Ordered by pathname. */
  blobs: ListBlobResultBlob[];
  /** Pass to the next `list` call; absent on the last page. */
  cursor?: string;
  hasMore: boolean;
}

export interface GetBlobResult {
  blob: HeadBlobResult;
  /** The blob's bytes; cancel it if you stop reading early. */
  stream: ReadableStream<Uint8Array>;
}

export interface BlobStore {
  readonly driver: BlobDriverName;
  /** Stores `body` at `pathname`; fails with `BlobAlreadyExistsError` when it exists and `allowOverwrite` is not set. */
  put(pathname: string, body: BlobBody, options: PutOptions): Promise<PutBlobResult>;
  /** Metadata of the blob at a URL this store returned or at a pathname; null when missing. */
  head(urlOrPathname: string): Promise<HeadBlobResult | null>;
  /** One page of blobs ordered by pathname. */
  list(options?: ListOptions): Promise<ListBlobResult>;
  /** Deletes blobs by URL or pathname; missing ones are ignored. */
  del(urlOrUrls: string | string[]): Promise<void>;
  /** The blob's metadata and bytes; null when missing. */
  get(urlOrPathname: string): Promise<GetBlobResult | null>;
}
