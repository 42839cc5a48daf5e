import http from "node:http";
import type { AddressInfo } from "node:net";
import { GET, HEAD } from "@/app/blob/[...pathname]/route";
import { blobFastPath } from "@/lib/blob/fast-path";

/**
 * Requests a blob URL through the Next.js route handler, with the catch-all params Next.js
 * would derive from it (segments after /blob/, percent-decoded).
 */
export async function fetchThroughRoute(url: string, init?: RequestInit): Promise<Response> {
  const segments = new URL(url).pathname.replace(/^\/blob\//, "").split("/").map(decodeURIComponent);
  const handler = init?.method === "HEAD" ? HEAD : GET;
  return handler(new Request(url, init), { params: Promise.resolve({ pathname: segments }) });
}

/**
 * A Node server answering with the blob fast path, as scripts/server.mjs puts it in front of
 * Next.js; what the fast path leaves to Next.js gets a 501 here. `fetch` sends a blob URL's path
 * and query to it over real HTTP, so headers are what a client receives.
 */
export async function startFastPathServer(): Promise<{ fetch: typeof fetchThroughRoute; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (!blobFastPath(request, response)) response.writeHead(501).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    fetch: (url, init) => {
      const { pathname, search } = new URL(url);
      return fetch(`${origin}${pathname}${search}`, init);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
