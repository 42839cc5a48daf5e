// envd's HTTP file transfer: `GET /files?path=` downloads, `POST /files?path=` uploads either one
// `application/octet-stream` body or `multipart/form-data` parts named "file" whose filename is
// the destination path (what the SDK's `files.write` sends).
import { constants as fsConstants, createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { resolvePath } from "./filesystem.mjs";

/** A multipart upload is parsed in memory; larger uploads must use octet-stream (streamed). */
const MAX_MULTIPART_BYTES = 256 * 1024 * 1024;

const sendError = (res, status, message) => {
  if (res.headersSent) return res.destroy();
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ code: status, message }));
};

/** Splits a buffered multipart body into its file parts. */
function parseMultipart(body, boundary) {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts = [];
  let position = body.indexOf(delimiter);
  while (position !== -1) {
    const start = position + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const headerEnd = body.indexOf("\r\n\r\n", start);
    if (headerEnd === -1) break;
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headerEnd);
    if (next === -1) break;
    const headers = body.subarray(start, headerEnd).toString("utf8");
    const filename = /filename\*?="([^"]*)"/i.exec(headers)?.[1];
    parts.push({ filename, data: body.subarray(headerEnd + 4, next) });
    position = next + 2;
  }
  return parts;
}

async function readAll(req, limit) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const writeInfo = (absolute) => ({ name: path.posix.basename(absolute), type: "file", path: absolute });

async function prepareTarget(home, requested) {
  const absolute = resolvePath(home, requested);
  await fs.mkdir(path.posix.dirname(absolute), { recursive: true });
  const existing = await fs.lstat(absolute).catch(() => null);
  if (existing?.isDirectory()) throw Object.assign(new Error(`path is a directory: ${absolute}`), { status: 400 });
  return absolute;
}

/** Serves `/files`; `false` for any other path. */
export async function serveFiles(req, res, { home }) {
  const url = new URL(req.url, "http://agent");
  if (url.pathname !== "/files") return false;
  const requested = url.searchParams.get("path");
  try {
    if (req.method === "GET") {
      if (!requested) return sendError(res, 400, "path is required"), true;
      const absolute = resolvePath(home, requested);
      // Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
      const file = await fs.open(absolute, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK).catch((error) => {
        if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
        throw error;
      });
      if (!file) return sendError(res, 404, `path not found: ${absolute}`), true;
      const stats = await file.stat().catch(async (error) => {
        await file.close();
        throw error;
      });
      if (!stats.isFile()) {
        await file.close();
        return sendError(res, 400, `path is not a file: ${absolute}`), true;
      }
      // No content-length: a file truncated while it is read (a dev server rewriting it) would
      // leave the client waiting for bytes that never come, until its timeout (the SDK's
      // files.read stalled so, then failed with 504). Chunked, the client gets what was there.
      // Read up to the size at open: a file that grows while it is read does not hold the answer.
      res.writeHead(200, { "content-type": "application/octet-stream" });
      if (stats.size === 0) {
        await file.close();
        res.end();
      } else await pipeline(file.createReadStream({ start: 0, end: stats.size - 1 }), res);
      return true;
    }
    if (req.method !== "POST") return sendError(res, 405, "GET or POST"), true;
    const contentType = req.headers["content-type"] ?? "";
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
    if (boundary) {
      const body = await readAll(req, MAX_MULTIPART_BYTES);
      if (!body) return sendError(res, 413, `multipart uploads are limited to ${MAX_MULTIPART_BYTES} bytes; send application/octet-stream`), true;
      const written = [];
      for (const part of parseMultipart(body, boundary[1] ?? boundary[2])) {
        const target = part.filename || requested;
        if (!target) return sendError(res, 400, "every file part needs a path"), true;
        const absolute = await prepareTarget(home, target);
        await fs.writeFile(absolute, part.data);
        written.push(writeInfo(absolute));
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(written));
      return true;
    }
    if (!requested) return sendError(res, 400, "path is required"), true;
    if (req.headers["content-encoding"]) return sendError(res, 415, "compressed uploads are not supported"), true;
    const absolute = await prepareTarget(home, requested);
    await pipeline(req, createWriteStream(absolute));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify([writeInfo(absolute)]));
    return true;
  } catch (error) {
    const status = error.status ?? (error.code === "invalid_argument" ? 400 : error.code === "EACCES" || error.code === "EPERM" ? 401 : error.code === "ENOSPC" ? 507 : 500);
    sendError(res, status, error.message);
    return true;
  }
}
