import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Duplex, Readable } from "node:stream";
import { readBodyWithin } from "@/lib/http/body";
import { log } from "@/lib/log";
import { bodyError, bodyLimitOf, errorBody } from "./http";

/** Serving fetch-style handlers through node:http on loopback: the emulator's own server and each deployment's listener. */

export interface LoopbackServer {
  port: number;
  /** Stops listening and drops open connections (WebSockets included). */
  close(): Promise<void>;
}

/** Hands a WebSocket upgrade to whoever speaks the protocol; the socket is destroyed when nobody does. */
export type UpgradeHandler = (request: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * Converts a Node request into a fetch Request; the signal aborts when the client goes away. The
 * body is read within its path's Convex limit and the idle timeout (PayloadTooLargeError and
 * BodyTimeoutError otherwise, with the rest unread).
 */
async function toRequest(req: http.IncomingMessage, origin: string, signal: AbortSignal): Promise<Request> {
  const url = origin + (req.url ?? "/");
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const streamed = new Request(url, { method: req.method, headers, body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined, duplex: "half" } as RequestInit);
  const body = hasBody ? await readBodyWithin(streamed, bodyLimitOf(new URL(url).pathname)) : undefined;
  return new Request(url, { method: req.method, headers, body, signal });
}

async function writeResponse(res: http.ServerResponse, response: Response, extraHeaders: Record<string, string> = {}): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), ...extraHeaders, "content-length": String(body.length) });
  res.end(body);
}

/** Listens on 127.0.0.1:`port` (0 picks a free one) and answers every request with `handle`. */
export async function listenOnLoopback(
  port: number,
  handle: (request: Request) => Promise<Response>,
  upgrade?: UpgradeHandler,
): Promise<LoopbackServer> {
  const server = http.createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const origin = `http://${req.headers.host ?? "127.0.0.1"}`;
    toRequest(req, origin, controller.signal)
      .then(handle)
      .then((response) => writeResponse(res, response))
      .catch(async (error: unknown) => {
        const refused = bodyError(error);
        // The rest of a refused body is never read: the connection closes after the answer.
        if (refused && !res.headersSent) return writeResponse(res, errorBody(refused.status, refused.code, refused.message), { connection: "close" });
        log.error("emulator server failed to answer", { error });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  const sockets = new Set<Duplex>();
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    if (upgrade) upgrade(req, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
}
