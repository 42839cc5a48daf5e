import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Where the custom server (`scripts/server.mjs`) finds the fast paths. A global, because that
 * plain-JavaScript server cannot import this TypeScript; lib/startup installs them at start. The
 * server asks them first and hands the request to Next.js when they answer false.
 */
export const FAST_PATH_KEY = Symbol.for("cloud-backend-service.fastPath");

/** Takes a request (true) and answers it in full, or leaves it to Next.js (false). */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

/** Makes `paths` available to the custom server, asked in order (called once at server start). */
export function installFastPaths(paths: readonly FastPath[]): void {
  const first: FastPath = (request, response) => paths.some((path) => path(request, response));
  (globalThis as Record<symbol, FastPath>)[FAST_PATH_KEY] = first;
}

/**
 * The URL and headers of a Node request as a fetch Request without a body, for code that reads
 * only those (authentication, the CSRF check). Repeated headers are joined, as fetch does.
 */
export function requestHeadOf(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return new Request(`http://${request.headers.host ?? "localhost"}${request.url ?? "/"}`, { method: request.method, headers });
}

/**
 * Writes a fetch Response to a Node response, with its Content-Length. When `request` still has
 * unread body bytes (a refused upload), the answer closes the connection: the rest is never read.
 */
export async function writeResponse(request: IncomingMessage, response: ServerResponse, answer: Response): Promise<void> {
  const body = Buffer.from(await answer.arrayBuffer());
  const headers: Record<string, string> = { ...Object.fromEntries(answer.headers), "content-length": String(body.length) };
  if (!request.complete) headers.connection = "close";
  response.writeHead(answer.status, headers);
  response.end(body);
}
