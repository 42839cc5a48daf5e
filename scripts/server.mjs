// The production server `npm start` runs: Next.js's request handler behind a plain Node listener
// (Next's documented custom-server pattern), so hot paths can be answered without it. The app
// installs those paths at start (lib/blob/fast-path.ts) under a global this file only reads, and
// finds the listener under another global to drain it at SIGTERM/SIGINT (lib/shutdown).
import http from "node:http";
import path from "node:path";
import next from "next";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const FAST_PATH_KEY = Symbol.for("cloud-backend-service.fastPath");
const HTTP_SERVER_KEY = Symbol.for("cloud-backend-service.httpServer");

process.env.NODE_ENV ||= "production";
const port = Number(process.env.PORT || 3000);
const app = next({ dir: root, dev: false, port });
await app.prepare();
const handle = app.getRequestHandler();

// Explicit limits: headers over 16 KiB are refused (431); a request whose body has not fully
// arrived within 2 minutes is ended (408), not left open for Node's default 5 minutes.
const server = http.createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 120_000 }, (request, response) => {
  // Looked up per request: instrumentation (lib/startup) installs it after `prepare` resolves;
  // until then Next.js answers everything.
  if (globalThis[FAST_PATH_KEY]?.(request, response)) return;
  void handle(request, response);
});
// What Node answers itself, before any route runs, in the product's JSON error shape (Node's own
// answers have no body): headers over the limit, a request incomplete at requestTimeout, a request
// it cannot parse.
const CLIENT_ERRORS = {
  HPE_HEADER_OVERFLOW: [431, "headers_too_large", "The request headers are larger than 16 KiB."],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "request_timeout", "The request did not arrive in full within 120 s."],
};
server.on("clientError", (error, socket) => {
  const response = socket._httpMessage;
  if (error.code !== "ECONNRESET" && socket.writable && !response?.headersSent) {
    const [status, code, message] = CLIENT_ERRORS[error.code] ?? [400, "bad_request", "The request could not be parsed as HTTP."];
    const body = JSON.stringify({ error: { code, message } });
    // Written, then the socket destroyed, as Node does with its own answers: written bytes still leave.
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
});
server.on("upgrade", app.getUpgradeHandler());
globalThis[HTTP_SERVER_KEY] = server;
server.listen(port, () => console.log(`  Ready on port ${port}`));
