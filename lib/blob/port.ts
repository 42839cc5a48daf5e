import type { Readable } from "node:stream";

/**
 * The blob store port. Semantics follow `@vercel/blob` 2.x: pathnames are keys, `list` is ordered
 * by pathname, puts refuse to overwrite unless asked, deleting a missing blob is not an error.
 * Drivers: `drivers/fs.ts` (default), `drivers/vercel.ts`, `drivers/s3.ts`. What only some drivers
 * can do is an optional method: callers ask the store for it, never which driver it is.
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

/** Inclusive byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A committed blob opened for reading: its metadata is exactly the version the file holds. */
export interface OpenedBlob {
  blob: HeadBlobResult;
  /** Streams the whole blob or an inclusive byte range; call at most once. */
  stream(range?: ByteRange): ReadableStream<Uint8Array>;
  /** Reads into `buffer` from `position` of the blob; answers the bytes read (0 at the end). */
  read(buffer: Buffer, length: number, position: number): Promise<number>;
  /** Releases the file when the bytes are not streamed (HEAD, 304, 416, or after `read`). */
  close(): Promise<void>;
}

/** A host file whose bytes are durable in the store under a version that is not visible yet. */
export interface PreparedBlobFile {
  /** Commits the version at `pathname`, at most once; a failed commit removes the version. */
  put(pathname: string, options: PutOptions): Promise<PutBlobResult>;
  /** Removes the version unless it was committed. */
  discard(): Promise<void>;
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

  // Optional capabilities (the fs driver has them all).

  /**
   * Opens a blob for serving (ranges, conditional requests); null when missing. A store with
   * `open` serves its blobs itself, at this service's `/blob/<pathname>`.
   */
  open?(urlOrPathname: string): Promise<OpenedBlob | null>;
  /**
   * `put` of a finished host file that the store takes over: linked into the store rather than
   * copied, so an upload's bytes hit the disk once. The file is gone from `hostPath` afterwards,
   * whether the put succeeded or not.
   */
  putFile?(pathname: string, hostPath: string, options: PutOptions): Promise<PutBlobResult>;
  /**
   * The file work of {@link putFile} (fsync, link into the store, directory fsync) without the
   * commit, so a caller can do it outside a lock and commit inside it. `hostPath` is left to the
   * caller and must not change afterwards.
   */
  prepareFile?(hostPath: string): Promise<PreparedBlobFile>;
}
