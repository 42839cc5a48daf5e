import type { Readable } from "node:stream";
import type { Part, PutBlobResult as SdkPutBlobResult } from "@vercel/blob";
import { NotConfiguredError } from "@/lib/errors";
import { registerSecret } from "@/lib/log";
import { contentTypeForPathname } from "../content-type";
import { BlobAlreadyExistsError, BlobOptionsError, BlobRateLimitedError, BlobStoreUnavailableError } from "../errors";
import { normalizeBody, resolveListOptions, validatePutOptions } from "../options";
import { forEachPart } from "../parts";
import { validatePathname } from "../pathname";
import type { BlobStore, HeadBlobResult } from "../port";

type VercelBlobSdk = typeof import("@vercel/blob");
type SdkCreateOptions = Parameters<VercelBlobSdk["createMultipartUpload"]>[1];

export interface VercelBlobStoreOptions {
  /**
   * Read-write token (`BLOB_READ_WRITE_TOKEN`). When unset the SDK resolves credentials itself
   * (the same variable, or OIDC when hosted on Vercel).
   */
  token?: string;
}

const isUrl = (value: string) => /^https?:\/\//i.test(value);

/** URLs go to the service as they are; pathnames get our validation first. */
const checkUrlOrPathname = (value: string) => (isUrl(value) ? value : validatePathname(value));

/** What the service's refusals say, by the SDK's error class. */
function unavailableMessage(sdk: VercelBlobSdk, error: InstanceType<VercelBlobSdk["BlobError"]>): string {
  if (error instanceof sdk.BlobAccessError) return "Vercel Blob refused the token.";
  if (error instanceof sdk.BlobStoreNotFoundError) return "The Vercel Blob store does not exist.";
  if (error instanceof sdk.BlobStoreSuspendedError) return "The Vercel Blob store is suspended.";
  if (error instanceof sdk.BlobRequestAbortedError) return "The request to Vercel Blob was aborted.";
  if (error instanceof sdk.BlobServiceNotAvailable) return "Vercel Blob is not available.";
  return error.message;
}

/** Translates an SDK failure into the port's error types, by the SDK's error classes. */
function portError(sdk: VercelBlobSdk, error: unknown, pathname?: string): Error {
  if (error instanceof sdk.BlobServiceRateLimited) return new BlobRateLimitedError(error.retryAfter, { cause: error });
  if (error instanceof sdk.BlobFileTooLargeError || error instanceof sdk.BlobContentTypeNotAllowedError) {
    return new BlobOptionsError(error.message);
  }
  if (!(error instanceof sdk.BlobError)) return new BlobStoreUnavailableError("Vercel Blob could not be reached.", { cause: error });
  // The SDK has no class for these two: the service's overwrite refusal is a bare 400
  // bad_request, and missing credentials are found before any request, so only the text tells.
  if (error.constructor === sdk.BlobError) {
    if (/already exists/i.test(error.message) && pathname) return new BlobAlreadyExistsError(pathname, { cause: error });
    if (/no blob credentials/i.test(error.message)) {
      return new NotConfiguredError("Vercel Blob needs BLOB_READ_WRITE_TOKEN.", "blob_not_configured");
    }
  }
  return new BlobStoreUnavailableError(unavailableMessage(sdk, error), { cause: error });
}

/** Vercel's multipart minimum is 5 MB per part (the last excepted). */
export const STREAM_PART_BYTES = 5 * 1024 * 1024;

/**
 * Uploads a stream one part at a time, so about one part is in memory. The SDK's own stream put
 * cannot be used: undici's fetch keeps every chunk of a streamed request body until the response
 * arrives (nodejs/undici#4058), so a 25 MB stream would cost 25 MB. A stream that fits in one
 * part is sent as a plain put.
 */
async function putStream(
  sdk: VercelBlobSdk,
  pathname: string,
  source: Readable,
  options: SdkCreateOptions,
): Promise<SdkPutBlobResult> {
  let upload: { key: string; uploadId: string } | undefined;
  let single: SdkPutBlobResult | undefined;
  const parts: Part[] = [];
  await forEachPart(source, STREAM_PART_BYTES, async ({ data, last }) => {
    if (!upload) {
      if (last) {
        single = await sdk.put(pathname, data, options);
        return;
      }
      upload = await sdk.createMultipartUpload(pathname, options);
    }
    parts.push(await sdk.uploadPart(pathname, data, { ...options, ...upload, partNumber: parts.length + 1 }));
  });
  if (single) return single;
  return sdk.completeMultipartUpload(pathname, parts, { ...options, ...upload! });
}

/**
 * `BLOB_DRIVER=vercel`: a thin mapping onto the official `@vercel/blob` SDK, imported on first
 * use. The SDK honours `VERCEL_BLOB_API_URL` (tests point it at a local double) and retries
 * transient failures `VERCEL_BLOB_RETRIES` times (default 10, with backoff of minutes).
 */
export function createVercelBlobStore(options: VercelBlobStoreOptions = {}): BlobStore {
  registerSecret(options.token);
  let sdkPromise: Promise<VercelBlobSdk> | undefined;
  const loadSdk = () => (sdkPromise ??= import("@vercel/blob"));
  const auth = { token: options.token };

  /** Runs one SDK call and maps its failures. */
  async function call<T>(fn: (sdk: VercelBlobSdk) => Promise<T>, pathname?: string): Promise<T> {
    const sdk = await loadSdk();
    try {
      return await fn(sdk);
    } catch (error) {
      throw portError(sdk, error, pathname);
    }
  }

  async function head(urlOrPathname: string): Promise<HeadBlobResult | null> {
    const target = checkUrlOrPathname(urlOrPathname);
    const sdk = await loadSdk();
    try {
      const blob = await sdk.head(target, auth);
      return {
        url: blob.url,
        downloadUrl: blob.downloadUrl,
        pathname: blob.pathname,
        size: blob.size,
        uploadedAt: blob.uploadedAt,
        contentType: blob.contentType,
        contentDisposition: blob.contentDisposition,
        cacheControl: blob.cacheControl,
        etag: blob.etag,
      };
    } catch (error) {
      if (error instanceof sdk.BlobNotFoundError) return null;
      throw portError(sdk, error);
    }
  }

  return {
    driver: "vercel",
    head,

    async put(pathname, body, putOptions) {
      validatePutOptions(pathname, putOptions);
      const source = normalizeBody(body);
      const sdkOptions = {
        ...auth,
        access: "public" as const,
        // Sent explicitly so the service never falls back to an older default.
        addRandomSuffix: putOptions.addRandomSuffix ?? false,
        allowOverwrite: putOptions.allowOverwrite ?? false,
        // Our extension table decides, so every driver agrees on types.
        contentType: putOptions.contentType ?? contentTypeForPathname(pathname),
        cacheControlMaxAge: putOptions.cacheControlMaxAge,
      };
      const result = await call(
        (sdk) =>
          Buffer.isBuffer(source) ? sdk.put(pathname, source, sdkOptions) : putStream(sdk, pathname, source, sdkOptions),
        pathname,
      );
      return {
        url: result.url,
        downloadUrl: result.downloadUrl,
        pathname: result.pathname,
        contentType: result.contentType,
        contentDisposition: result.contentDisposition,
        etag: result.etag,
      };
    },

    async list(listOptions) {
      const { prefix, limit, cursor } = resolveListOptions(listOptions);
      const result = await call((sdk) => sdk.list({ ...auth, prefix, limit, cursor }));
      return {
        blobs: result.blobs.map((blob) => ({
          url: blob.url,
          downloadUrl: blob.downloadUrl,
          pathname: blob.pathname,
          size: blob.size,
          uploadedAt: blob.uploadedAt,
          etag: blob.etag,
        })),
        cursor: result.hasMore ? result.cursor : undefined,
        hasMore: result.hasMore,
      };
    },

    async del(urlOrUrls) {
      const targets = (Array.isArray(urlOrUrls) ? urlOrUrls : [urlOrUrls]).map(checkUrlOrPathname);
      if (targets.length === 0) return;
      await call((sdk) => sdk.del(targets, auth));
    },

    async get(urlOrPathname) {
      const blob = await head(urlOrPathname);
      if (!blob) return null;
      // The SDK's get() only talks to *.blob.vercel-storage.com; public URLs are plain HTTP GETs.
      const response = await fetch(blob.url).catch((error: unknown) => {
        throw new BlobStoreUnavailableError("Vercel Blob could not be reached.", { cause: error });
      });
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        if (response.status === 404) return null;
        throw new BlobStoreUnavailableError(`Vercel Blob answered ${response.status} for a public blob URL.`);
      }
      return { blob, stream: response.body };
    },
  };
}
