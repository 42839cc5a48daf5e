// The benches' reference: what a hand-written Node server does for the same work, in a process
// of its own, plain JavaScript run by node (no loader). Prints "ready <port>" once it listens.
//   node bench/plain-node-server.mjs static <root>   GET/HEAD /<path>: stat, then stream <root>/<path>
//                                                    with the headers this service sends for a blob
//   node bench/plain-node-server.mjs upload <dir>    POST multipart/form-data: the file part parsed
//                                                    (busboy), hashed and written to <dir>, fsynced,
//                                                    answered with JSON, then removed
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import busboy from "busboy";

const [mode, root] = process.argv.slice(2);

function serveStatic(request, response) {
  const file = path.join(root, path.normalize(decodeURIComponent(request.url.split("?")[0])));
  fs.stat(file, (error, stat) => {
    if (error || !stat.isFile()) return response.writeHead(404).end();
    response.writeHead(200, {
      "content-type": "image/png",
      etag: `"${stat.ino}-${stat.mtimeMs}"`,
      "last-modified": stat.mtime.toUTCString(),
      "cache-control": "public, max-age=31536000",
      "accept-ranges": "bytes",
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "cross-origin",
      "content-disposition": `inline; filename="${path.basename(file)}"`,
      "content-length": stat.size,
    });
    if (request.method === "HEAD") return response.end();
    fs.createReadStream(file).pipe(response);
  });
}

async function receiveUpload(request, response) {
  const parser = busboy({ headers: request.headers });
  const file = path.join(root, `${crypto.randomUUID()}.upload`);
  let written;
  parser.on("file", (name, stream) => {
    const hash = crypto.createHash("sha256");
    stream.on("data", (chunk) => hash.update(chunk));
    written = pipeline(stream, fs.createWriteStream(file)).then(() => hash.digest("hex"));
  });
  const parsed = new Promise((resolve, reject) => parser.on("close", resolve).on("error", reject));
  request.pipe(parser);
  await parsed;
  const sha256 = await written;
  const handle = await fs.promises.open(file, "r");
  await handle.sync();
  const { size } = await handle.stat();
  await handle.close();
  const body = JSON.stringify({ size, sha256 });
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
  await fs.promises.rm(file);
}

const handlers = {
  static: serveStatic,
  upload: (request, response) =>
    receiveUpload(request, response).catch((error) => response.writeHead(400).end(String(error))),
};
if (!handlers[mode] || !root) throw new Error("Usage: plain-node-server.mjs static|upload <dir>");
http.createServer(handlers[mode]).listen(0, "127.0.0.1", function () {
  console.log(`ready ${this.address().port}`);
});
