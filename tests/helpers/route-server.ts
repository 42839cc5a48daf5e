import type http from "node:http";
import { startHttpServer } from "./http-server";

/** A route handler of app/api, called with the request and the dynamic segments it matched. */
export interface RouteBinding {
  method: string;
  pattern: RegExp;
  handler: (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
}

async function toRequest(incoming: http.IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    for (const item of Array.isArray(value) ? value : [value ?? ""]) headers.append(name, item);
  }
  const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD";
  return new Request(new URL(incoming.url ?? "/", base), { method: incoming.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
}

/**
 * Serves a few route handlers over real HTTP on 127.0.0.1, for clients that make their own
 * requests (pusher-js); named groups of a pattern become the route's params.
 */
export async function startRouteServer(routes: RouteBinding[]) {
  const server = await startHttpServer(async (incoming, outgoing) => {
    const request = await toRequest(incoming, server.url);
    const { pathname } = new URL(request.url);
    const match = routes.map((route) => ({ route, found: route.method === request.method ? route.pattern.exec(pathname) : null })).find(({ found }) => found);
    const response = match
      ? await match.route.handler(request, { params: Promise.resolve({ ...match.found?.groups }) })
      : Response.json({ error: { code: "not_found", message: "No such route." } }, { status: 404 });
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    outgoing.end(Buffer.from(await response.arrayBuffer()));
  });
  return server;
}
