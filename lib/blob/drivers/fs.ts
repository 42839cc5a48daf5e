import crypto from "node:crypto";
import { rm } from "node:fs/promises";
import type { Sql } from "@/lib/store";
import { BlobAlreadyExistsError, BlobOptionsError } from "../errors";
import { normalizeBody, type PreparedPut, preparePut, resolveListOptions, toPutResult } from "../options";
import { createBlobUrls } from "../pathname";
import type { BlobStore, HeadBlobResult, ListBlobResult, OpenedBlob, PreparedBlobFile, PutBlobResult } from "../port";
import { blobFileStream, createBlobFiles } from "./fs-files";
import {
  type BlobRow,
  deleteBlobRows,
  getBlobRow,
  insertBlobRowIfAbsent,
  listBlobRows,
  replaceBlobRow,
} from "./fs-metadata";

export interface FsBlobStoreOptions {
  /** Directory of the blob files (`DATA_DIR/blobs`). */
  rootDir: string;
  /** The app's public address; blob URLs are `<publicBaseUrl>/blob/<pathname>`. */
  publicBaseUrl: string;
  /** The store holding the `blobs` metadata table. */
  getSql: () => Promise<Sql>;
}

/** The fs driver: every optional capability of the port. */
export type FsBlobStore = Required<BlobStore> & { readonly driver: "fs" };

const quote = (version: string) => `"${version}"`;
const versionOf = (etag: string) => etag.slice(1, -1);

// The cursor is opaque to callers; inside it is the last pathname of the page.
const encodeCursor = (pathname: string) => Buffer.from(pathname, "utf8").toString("base64url");
function decodeCursor(cursor: string): string {
  const pathname = Buffer.from(cursor, "base64url").toString("utf8");
  if (!pathname || encodeCursor(pathname) !== cursor) throw new BlobOptionsError("The list cursor is not valid.");
  return pathname;
}

// Metadata of recently served pathnames; well under 1 KB each.
const SERVED_BLOBS_CACHED = 10_000;

/**
 * The default driver: bytes in files under `rootDir`, metadata in the `blobs` table, served by
 * `app/blob/[...pathname]/route.ts` and the fast path in front of Next.js. A put streams to a
 * temp file, fsyncs and renames it, then commits the row: until that commit nothing is visible,
 * so a crash mid-put leaves no blob.
 *
 * `open` keeps the metadata it served in memory, so a hot blob costs no query. That cache needs no
 * invalidation to stay correct, even against other processes: a version's file and metadata never
 * change, and a replaced or deleted version's file is unlinked, so an entry whose file no longer
 * opens is dropped and looked up again.
 */
export function createFsBlobStore(options: FsBlobStoreOptions): FsBlobStore {
  const files = createBlobFiles(options.rootDir);
  const urls = createBlobUrls(`${options.publicBaseUrl.replace(/\/+$/, "")}/blob`);

  const toHead = (row: BlobRow): HeadBlobResult => ({
    url: urls.urlFor(row.pathname),
    downloadUrl: urls.downloadUrlFor(row.pathname),
    pathname: row.pathname,
    size: row.size,
    uploadedAt: row.uploadedAt,
    contentType: row.contentType,
    contentDisposition: row.contentDisposition,
    cacheControl: row.cacheControl,
    etag: row.etag,
  });

  const served = new Map<string, HeadBlobResult>();
  function rememberServed(blob: HeadBlobResult) {
    // Map order is insertion order: re-inserting marks the blob recently used, the first is the oldest.
    served.delete(blob.pathname);
    served.set(blob.pathname, blob);
    if (served.size > SERVED_BLOBS_CACHED) served.delete(served.keys().next().value!);
  }

  async function lookUp(pathname: string): Promise<HeadBlobResult | null> {
    const row = await getBlobRow(await options.getSql(), pathname);
    return row ? toHead(row) : null;
  }

  async function open(urlOrPathname: string): Promise<OpenedBlob | null> {
    const pathname = urls.pathnameOf(urlOrPathname);
    // A concurrent overwrite or delete may unlink the file between lookup and open: look again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const blob = served.get(pathname) ?? (await lookUp(pathname));
      if (!blob) return null;
      const file = await files.open(versionOf(blob.etag));
      if (!file) {
        served.delete(pathname);
        continue;
      }
      rememberServed(blob);
      return {
        blob,
        stream: (range) => blobFileStream(file, range ?? { start: 0, end: blob.size - 1 }),
        read: file.read,
        close: file.close,
      };
    }
    return null;
  }

  const newVersion = () => crypto.randomBytes(16).toString("hex");

  /** Fails before any byte is written when the answer is already known. */
  async function refuseTaken(prepared: PreparedPut): Promise<void> {
    if (!prepared.allowOverwrite && (await getBlobRow(await options.getSql(), prepared.pathname))) {
      throw new BlobAlreadyExistsError(prepared.pathname);
    }
  }

  /** Commits the row of a written version: until then nothing is visible. A failure removes the version. */
  async function commitVersion(prepared: PreparedPut, version: string, size: number): Promise<PutBlobResult> {
    const row = { ...prepared, size, etag: quote(version) };
    try {
      const sql = await options.getSql();
      if (prepared.allowOverwrite) {
        const replaced = await replaceBlobRow(sql, row);
        if (replaced) await files.remove(versionOf(replaced));
      } else if (!(await insertBlobRowIfAbsent(sql, row))) {
        throw new BlobAlreadyExistsError(prepared.pathname);
      }
    } catch (error) {
      await files.remove(version);
      throw error;
    }
    return toPutResult(urls, prepared, row.etag);
  }

  async function prepareFile(hostPath: string): Promise<PreparedBlobFile> {
    const version = newVersion();
    const size = await files.adopt(version, hostPath).catch(async (error: unknown) => {
      await files.remove(version);
      throw error;
    });
    let committed = false;
    return {
      async put(pathname, putOptions) {
        let prepared: PreparedPut;
        try {
          prepared = preparePut(pathname, putOptions);
        } catch (error) {
          await files.remove(version);
          throw error;
        }
        const result = await commitVersion(prepared, version, size);
        committed = true;
        return result;
      },
      discard: async () => {
        if (!committed) await files.remove(version);
      },
    };
  }

  return {
    driver: "fs",
    open,

    async put(pathname, body, putOptions) {
      const prepared = preparePut(pathname, putOptions);
      await refuseTaken(prepared);
      const version = newVersion();
      return commitVersion(prepared, version, await files.write(version, normalizeBody(body)));
    },

    async putFile(pathname, hostPath, putOptions) {
      try {
        await refuseTaken(preparePut(pathname, putOptions));
        return await (await prepareFile(hostPath)).put(pathname, putOptions);
      } finally {
        await rm(hostPath, { force: true });
      }
    },

    prepareFile,

    // async: an invalid pathname rejects rather than throws.
    head: async (urlOrPathname) => lookUp(urls.pathnameOf(urlOrPathname)),

    async list(listOptions): Promise<ListBlobResult> {
      const { prefix, limit, cursor } = resolveListOptions(listOptions);
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      const rows = await listBlobRows(await options.getSql(), { prefix, after, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return {
        blobs: page.map((row) => ({
          url: urls.urlFor(row.pathname),
          downloadUrl: urls.downloadUrlFor(row.pathname),
          pathname: row.pathname,
          size: row.size,
          uploadedAt: row.uploadedAt,
          etag: row.etag,
        })),
        cursor: hasMore ? encodeCursor(page[page.length - 1].pathname) : undefined,
        hasMore,
      };
    },

    async del(urlOrUrls) {
      const pathnames = (Array.isArray(urlOrUrls) ? urlOrUrls : [urlOrUrls]).map((value) => urls.pathnameOf(value));
      const removed = await deleteBlobRows(await options.getSql(), pathnames);
      await Promise.all(removed.map((etag) => files.remove(versionOf(etag))));
    },

    async get(urlOrPathname) {
      const opened = await open(urlOrPathname);
      return opened ? { blob: opened.blob, stream: opened.stream() } : null;
    },
  };
}
