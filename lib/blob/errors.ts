import { AppError } from "@/lib/errors";

/**
 * Base of every blob-store failure. Extends AppError, so a route that lets one escape answers
 * `{ error: { code, message } }` with the matching status.
 */
export class BlobError extends AppError {}

/** The pathname (or URL) is not one the store accepts: empty segments, `..`, too long, ... */
export class BlobPathnameError extends BlobError {
  constructor(message: string) {
    super(400, "invalid_blob_pathname", message);
  }
}

/** An option or the body of a call is invalid (limit, cursor, cacheControlMaxAge, body type, ...). */
export class BlobOptionsError extends BlobError {
  constructor(message: string) {
    super(400, "invalid_blob_options", message);
  }
}

/** A put to an existing pathname without `allowOverwrite: true`. */
export class BlobAlreadyExistsError extends BlobError {
  constructor(readonly pathname: string, options?: { cause?: unknown }) {
    super(
      409,
      "blob_already_exists",
      `A blob already exists at "${pathname}"; pass allowOverwrite: true to replace it or addRandomSuffix: true for a unique name.`,
      options,
    );
  }
}

/** The remote store asked us to slow down; `retryAfterSeconds` is 0 when it gave no hint. */
export class BlobRateLimitedError extends BlobError {
  constructor(readonly retryAfterSeconds: number, options?: { cause?: unknown }) {
    super(
      429,
      "rate_limited",
      `The blob store is rate limiting requests${retryAfterSeconds ? `; retry in ${retryAfterSeconds} s` : ""}.`,
      options,
    );
  }
}

/** The remote store (Vercel Blob, S3) failed or could not be reached. */
export class BlobStoreUnavailableError extends BlobError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(502, "blob_store_failed", message, options);
  }
}
