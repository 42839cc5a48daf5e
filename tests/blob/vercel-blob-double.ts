import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { contentDisposition, contentTypeForPathname, dispositionTypeFor } from "@/lib/blob/content-type";
import type { BlobRow } from "@/lib/blob/drivers/fs-metadata";
import { createBlobUrls, fileNameOf, withRandomSuffix } from "@/lib/blob/pathname";

/**
 * A local HTTP double of the Vercel Blob API, enough for the real `@vercel/blob` SDK (which
 * uses undici's own fetch, so msw cannot intercept it): put, multipart put, head, list, delete
 * and public reads.
 * Wire shapes follow research/blob.md 1.8. Bodies are streamed to files, never held in memory.
 */
export interface VercelBlobDouble {
  /** Value for VERCEL_BLOB_API_URL. */
  apiUrl: string;
  /** A read-write token in Vercel's format; the double refuses any other. */
  token: string;
  /** Makes the next API request fail with this error body (e.g. rate_limited + Retry-After). */
  failNext(failure: { status: number; code: string; message?: string; retryAfterSeconds?: number }): void;
  close(): Promise<void>;
}

/** The same metadata the fs driver keeps, plus the file holding the bytes. */
interface StoredBlob extends BlobRow {
  file: string;
}

const STORE_ID = "localdouble12345";

export async function startVercelBlobDouble(): Promise<VercelBlobDouble> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vercel-blob-double-"));
  const blobs = new Map<string, StoredBlob>();
  // Multipart uploads in progress: upload id → final pathname.
  const uploads = new Map<string, string>();
  const token = `vercel_blob_rw_${STORE_ID}_${crypto.randomBytes(12).toString("hex")}`;
  let pendingFailure: Parameters<VercelBlobDouble["failNext"]>[0] | undefined;
  // Listening first: blob URLs need the port.
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const urls = createBlobUrls(`${origin}/public`);

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };
  const fail = (res: http.ServerResponse, status: number, code: string, message?: string) =>
    send(res, status, { error: { code, message } });
  const describe = (blob: StoredBlob) => ({
    url: urls.urlFor(blob.pathname),
    downloadUrl: urls.downloadUrlFor(blob.pathname),
    pathname: blob.pathname,
    contentType: blob.contentType,
    contentDisposition: blob.contentDisposition,
    etag: blob.etag,
  });
  const toPathname = (urlOrPathname: string) => {
    try {
      return urls.pathnameOf(urlOrPathname);
    } catch {
      return urlOrPathname;
    }
  };

  const refuseOverwrite = (res: http.ServerResponse) =>
    fail(res, 400, "bad_request", "This blob already exists, use `allowOverwrite: true` if you want to overwrite it. Or `addRandomSuffix: true` to generate a unique filename.");
  const finalPathname = (req: http.IncomingMessage, requested: string) =>
    req.headers["x-add-random-suffix"] === "1" ? withRandomSuffix(requested) : requested;
  const mayWrite = (req: http.IncomingMessage, pathname: string) =>
    !blobs.has(pathname) || req.headers["x-allow-overwrite"] === "1";

  /** Makes a fully written file the current version of `pathname`, as the service would. */
  function commit(req: http.IncomingMessage, res: http.ServerResponse, pathname: string, requested: string, file: string) {
    const contentType = String(req.headers["x-content-type"] ?? contentTypeForPathname(pathname));
    const previous = blobs.get(pathname);
    const blob: StoredBlob = {
      pathname,
      file,
      size: fs.statSync(file).size,
      contentType,
      contentDisposition: contentDisposition(dispositionTypeFor(contentType), fileNameOf(requested)),
      cacheControl: `public, max-age=${req.headers["x-cache-control-max-age"] ?? 2_592_000}`,
      etag: `"${crypto.randomBytes(8).toString("hex")}"`,
      uploadedAt: new Date(),
    };
    blobs.set(pathname, blob);
    if (previous) fs.rmSync(previous.file, { force: true });
    send(res, 200, describe(blob));
  }

  async function put(req: http.IncomingMessage, res: http.ServerResponse, requested: string) {
    const pathname = finalPathname(req, requested);
    if (!mayWrite(req, pathname)) {
      req.resume();
      return refuseOverwrite(res);
    }
    const file = path.join(dir, crypto.randomUUID());
    await pipeline(req, fs.createWriteStream(file));
    commit(req, res, pathname, requested, file);
  }

  /** Multipart: create → {key, uploadId}; upload → {etag}; complete (JSON parts) → put result. */
  async function multipart(req: http.IncomingMessage, res: http.ServerResponse, requested: string) {
    const action = req.headers["x-mpu-action"];
    if (action === "create") {
      const pathname = finalPathname(req, requested);
      if (!mayWrite(req, pathname)) return refuseOverwrite(res);
      const uploadId = crypto.randomUUID();
      uploads.set(uploadId, pathname);
      return send(res, 200, { key: pathname, uploadId });
    }
    const uploadId = String(req.headers["x-mpu-upload-id"]);
    const pathname = uploads.get(uploadId);
    if (!pathname) return fail(res, 404, "not_found", "Unknown upload id");
    if (action === "upload") {
      const etag = `${uploadId}-${req.headers["x-mpu-part-number"]}`;
      await pipeline(req, fs.createWriteStream(path.join(dir, etag)));
      return send(res, 200, { etag });
    }
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const parts = (JSON.parse(raw) as { partNumber: number; etag: string }[]).sort((a, b) => a.partNumber - b.partNumber);
    const file = path.join(dir, crypto.randomUUID());
    // Chunk by chunk into one file handle: a pipeline per part into one stream left a listener per part on it.
    const output = await fs.promises.open(file, "w");
    try {
      for (const part of parts) {
        for await (const chunk of fs.createReadStream(path.join(dir, part.etag))) await output.write(chunk as Buffer);
        fs.rmSync(path.join(dir, part.etag));
      }
    } finally {
      await output.close();
    }
    uploads.delete(uploadId);
    commit(req, res, pathname, requested, file);
  }

  function list(res: http.ServerResponse, query: URLSearchParams) {
    const limit = Number(query.get("limit") ?? 1000);
    const prefix = query.get("prefix") ?? "";
    const after = query.get("cursor") ? Buffer.from(query.get("cursor")!, "base64url").toString() : undefined;
    const matching = [...blobs.keys()]
      .filter((name) => name.startsWith(prefix) && (after === undefined || Buffer.compare(Buffer.from(name), Buffer.from(after)) > 0))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const page = matching.slice(0, limit).map((name) => blobs.get(name)!);
    const hasMore = matching.length > limit;
    send(res, 200, {
      blobs: page.map((blob) => ({ ...describe(blob), size: blob.size, uploadedAt: blob.uploadedAt.toISOString() })),
      cursor: hasMore ? Buffer.from(page[page.length - 1].pathname).toString("base64url") : undefined,
      hasMore,
    });
  }

  async function del(req: http.IncomingMessage, res: http.ServerResponse) {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    for (const target of (JSON.parse(raw) as { urls: string[] }).urls) {
      const pathname = toPathname(target);
      const blob = blobs.get(pathname);
      blobs.delete(pathname);
      if (blob) fs.rmSync(blob.file, { force: true });
    }
    send(res, 200, {});
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? "/", "http://double");
    if (url.pathname.startsWith("/public/")) {
      const blob = blobs.get(url.pathname.slice("/public/".length).split("/").map(decodeURIComponent).join("/"));
      if (!blob) return fail(res, 404, "not_found");
      res.writeHead(200, { "content-type": blob.contentType, "content-length": blob.size, etag: blob.etag });
      return void fs.createReadStream(blob.file).pipe(res);
    }
    if (pendingFailure) {
      const failure = pendingFailure;
      pendingFailure = undefined;
      req.resume();
      const headers: Record<string, string> = failure.retryAfterSeconds ? { "retry-after": String(failure.retryAfterSeconds) } : {};
      return send(res, failure.status, { error: { code: failure.code, message: failure.message } }, headers);
    }
    if (req.headers.authorization !== `Bearer ${token}`) return fail(res, 403, "forbidden");
    if (req.method === "PUT" && url.pathname === "/api/blob/") return put(req, res, url.searchParams.get("pathname") ?? "");
    if (req.method === "POST" && url.pathname === "/api/blob/delete") return del(req, res);
    if (req.method === "POST" && url.pathname === "/api/blob/mpu") return multipart(req, res, url.searchParams.get("pathname") ?? "");
    if (req.method === "GET" && url.pathname === "/api/blob" && url.searchParams.has("url")) {
      const blob = blobs.get(toPathname(url.searchParams.get("url")!));
      if (!blob) return fail(res, 404, "not_found");
      return send(res, 200, {
        ...describe(blob),
        size: blob.size,
        uploadedAt: blob.uploadedAt.toISOString(),
        cacheControl: blob.cacheControl,
      });
    }
    if (req.method === "GET" && url.pathname === "/api/blob") return list(res, url.searchParams);
    fail(res, 404, "not_found", `No route for ${req.method} ${url.pathname}`);
  }

  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((error: unknown) => fail(res, 500, "unknown_error", String(error)));
  });

  return {
    apiUrl: `${origin}/api/blob`,
    token,
    failNext(failure) {
      pendingFailure = failure;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
