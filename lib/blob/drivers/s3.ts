import type { HeadObjectCommandOutput, S3Client } from "@aws-sdk/client-s3";
import { NotConfiguredError } from "@/lib/errors";
import { registerSecret } from "@/lib/log";
import { DEFAULT_CONTENT_TYPE } from "../content-type";
import { BlobAlreadyExistsError, BlobOptionsError, BlobRateLimitedError, BlobStoreUnavailableError } from "../errors";
import { normalizeBody, preparePut, resolveListOptions, toPutResult } from "../options";
import { createBlobUrls } from "../pathname";
import type { BlobStore, HeadBlobResult } from "../port";

type S3Sdk = typeof import("@aws-sdk/client-s3");
type ObjectHeaders = Pick<
  HeadObjectCommandOutput,
  "ContentLength" | "LastModified" | "ContentType" | "ContentDisposition" | "CacheControl" | "ETag"
>;
type LibStorage = typeof import("@aws-sdk/lib-storage");

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** S3-compatible endpoint (R2, MinIO, s3rver); unset = AWS. */
  endpoint?: string;
  /** Static credentials; unset = the AWS SDK's default credential chain. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /**
   * Where objects are publicly readable (CDN, r2.dev, website endpoint). Default: the endpoint's
   * bucket URL, or `https://<bucket>.s3.<region>.amazonaws.com`.
   */
  publicBaseUrl?: string;
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`), needed by most self-hosted stores. */
  forcePathStyle?: boolean;
  /**
   * Multipart part size; a put holds about `partSizeBytes × (queueSize + 1)` in memory.
   * @defaultValue 5 MiB (S3's minimum)
   */
  partSizeBytes?: number;
  /**
   * Parts uploaded concurrently.
   * @defaultValue 1
   */
  queueSize?: number;
}

/** DeleteObjects accepts at most this many keys per request. */
export const DELETE_BATCH_SIZE = 1000;
const MIN_PART_SIZE = 5 * 1024 * 1024;

function publicBaseUrlOf(options: S3BlobStoreOptions): string {
  if (options.publicBaseUrl) return options.publicBaseUrl;
  if (!options.endpoint) return `https://${options.bucket}.s3.${options.region}.amazonaws.com`;
  const endpoint = new URL(options.endpoint);
  const basePath = endpoint.pathname.replace(/\/+$/, "");
  return options.forcePathStyle
    ? `${endpoint.origin}${basePath}/${options.bucket}`
    : `${endpoint.protocol}//${options.bucket}.${endpoint.host}${basePath}`;
}

const statusOf = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const nameOf = (error: unknown) => (error instanceof Error ? error.name : "UnknownError");
const isNotFound = (error: unknown) => statusOf(error) === 404 || ["NotFound", "NoSuchKey"].includes(nameOf(error));

/** Translates an S3 failure into the port's error types; S3 messages are not passed on. */
function portError(error: unknown, pathname?: string): Error {
  const name = nameOf(error);
  const status = statusOf(error);
  // 412: If-None-Match refused the overwrite; 409: a concurrent conditional write won.
  if (pathname && (status === 412 || name === "PreconditionFailed" || name === "ConditionalRequestConflict")) {
    return new BlobAlreadyExistsError(pathname, { cause: error });
  }
  if (name === "SlowDown" || status === 429) return new BlobRateLimitedError(0, { cause: error });
  return new BlobStoreUnavailableError(`S3 request failed: ${name}${status ? ` (HTTP ${status})` : ""}.`, { cause: error });
}

/**
 * `BLOB_DRIVER=s3`: `@aws-sdk/client-s3` with `@aws-sdk/lib-storage` for streamed multipart
 * puts, both imported on first use. Sets Content-Type itself (the SDK would send octet-stream
 * for streams), lists with ListObjectsV2 continuation tokens, deletes in batches of 1000.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  if (!options.bucket) throw new NotConfiguredError("The s3 blob driver needs S3_BUCKET.", "blob_not_configured");
  registerSecret(options.secretAccessKey);
  const bucket = options.bucket;
  const urls = createBlobUrls(publicBaseUrlOf(options));
  const partSize = Math.max(options.partSizeBytes ?? MIN_PART_SIZE, MIN_PART_SIZE);
  const queueSize = options.queueSize ?? 1;

  let connection: Promise<{ sdk: S3Sdk; storage: LibStorage; client: S3Client }> | undefined;
  const connect = () =>
    (connection ??= (async () => {
      const [sdk, storage] = await Promise.all([import("@aws-sdk/client-s3"), import("@aws-sdk/lib-storage")]);
      const client = new sdk.S3Client({
        region: options.region,
        endpoint: options.endpoint,
        forcePathStyle: options.forcePathStyle,
        credentials:
          options.accessKeyId && options.secretAccessKey
            ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
            : undefined,
        // Non-AWS stores (s3rver, older R2/B2) mishandle the aws-chunked CRC32 trailers that SDK
        // 3.729+ sends by default; checksums are then only sent where S3 requires them.
        ...(options.endpoint
          ? { requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" }
          : {}),
      });
      return { sdk, storage, client };
    })());

  /** Port metadata from the headers S3 returns on HEAD and GET. */
  const toHead = (pathname: string, object: ObjectHeaders): HeadBlobResult => ({
    url: urls.urlFor(pathname),
    downloadUrl: urls.downloadUrlFor(pathname),
    pathname,
    size: object.ContentLength ?? 0,
    uploadedAt: object.LastModified ?? new Date(0),
    contentType: object.ContentType ?? DEFAULT_CONTENT_TYPE,
    contentDisposition: object.ContentDisposition ?? "",
    cacheControl: object.CacheControl ?? "",
    etag: object.ETag ?? "",
  });

  async function head(urlOrPathname: string): Promise<HeadBlobResult | null> {
    const pathname = urls.pathnameOf(urlOrPathname);
    const { sdk, client } = await connect();
    try {
      return toHead(pathname, await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: pathname })));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw portError(error);
    }
  }

  return {
    driver: "s3",
    head,

    async put(pathname, body, putOptions) {
      const prepared = preparePut(pathname, putOptions);
      const source = normalizeBody(body);
      const { storage, client } = await connect();
      // Checked first because some S3-compatible stores ignore If-None-Match; on AWS the
      // conditional write below also closes the race between this check and the upload.
      if (!prepared.allowOverwrite && (await head(prepared.pathname))) {
        throw new BlobAlreadyExistsError(prepared.pathname);
      }
      const upload = new storage.Upload({
        client,
        partSize,
        queueSize,
        leavePartsOnError: false,
        params: {
          Bucket: bucket,
          Key: prepared.pathname,
          Body: source,
          ContentType: prepared.contentType,
          ContentDisposition: prepared.contentDisposition,
          CacheControl: prepared.cacheControl,
          ...(prepared.allowOverwrite ? {} : { IfNoneMatch: "*" }),
        },
      });
      let etag: string | undefined;
      try {
        etag = (await upload.done()).ETag;
      } catch (error) {
        throw portError(error, prepared.pathname);
      }
      return toPutResult(urls, prepared, etag ?? "");
    },

    async list(listOptions) {
      const { prefix, limit, cursor } = resolveListOptions(listOptions);
      const { sdk, client } = await connect();
      try {
        const page = await client.send(
          new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: limit, ContinuationToken: cursor }),
        );
        const hasMore = page.IsTruncated === true;
        return {
          blobs: (page.Contents ?? []).map((object) => ({
            url: urls.urlFor(object.Key!),
            downloadUrl: urls.downloadUrlFor(object.Key!),
            pathname: object.Key!,
            size: object.Size ?? 0,
            uploadedAt: object.LastModified ?? new Date(0),
            etag: object.ETag ?? "",
          })),
          cursor: hasMore ? page.NextContinuationToken : undefined,
          hasMore,
        };
      } catch (error) {
        if (cursor && nameOf(error) === "InvalidArgument") throw new BlobOptionsError("The list cursor is not valid.");
        throw portError(error);
      }
    },

    async del(urlOrUrls) {
      const keys = (Array.isArray(urlOrUrls) ? urlOrUrls : [urlOrUrls]).map((value) => urls.pathnameOf(value));
      const { sdk, client } = await connect();
      for (let start = 0; start < keys.length; start += DELETE_BATCH_SIZE) {
        const batch = keys.slice(start, start + DELETE_BATCH_SIZE);
        let failed: number;
        try {
          const result = await client.send(
            new sdk.DeleteObjectsCommand({
              Bucket: bucket,
              // Quiet: only failures are reported; S3 reports missing keys as deleted.
              Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
            }),
          );
          failed = result.Errors?.length ?? 0;
        } catch (error) {
          throw portError(error);
        }
        if (failed > 0) throw new BlobStoreUnavailableError(`S3 could not delete ${failed} of ${batch.length} blobs.`);
      }
    },

    async get(urlOrPathname) {
      const pathname = urls.pathnameOf(urlOrPathname);
      const { sdk, client } = await connect();
      try {
        const object = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: pathname }));
        return {
          blob: toHead(pathname, object),
          stream: object.Body!.transformToWebStream() as ReadableStream<Uint8Array>,
        };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw portError(error);
      }
    },
  };
}
