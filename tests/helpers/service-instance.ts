/**
 * An app instance in a process of its own, started as scripts/server.mjs starts one but without
 * Next.js: lib/startup's startServer (store, instance heartbeat, dev-server lease check, the
 * SIGTERM/SIGINT graceful shutdown) and a loopback HTTP listener, published where server.mjs
 * publishes it, serving a few route handlers. Besides them, `GET /test/held?release=<file>` writes
 * `<file>.held` and answers only once `<file>` exists, so a test holds a request in flight, and
 * `POST /test/app-dev-server?sandboxId=<id>` starts a sandbox's app dev server unless it runs
 * (what a preview or a job does), answering `{ previewUrl }`.
 * Prints `READY <base url>` once it serves.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { POST as devStartRoute } from "@/app/api/backend/dev/start/route";
import { GET as statusRoute } from "@/app/api/backend/status/route";
import { ensureAppDevServer } from "@/lib/dev-servers";
import { route } from "@/lib/http";
import { getSandboxProvider } from "@/lib/sandbox";
import { HTTP_SERVER_KEY } from "@/lib/shutdown";
import { startServer } from "@/lib/startup";

type Handler = (request: Request) => Promise<Response>;

const appDevServerRoute = route(async (request) => {
  const sandbox = await getSandboxProvider().connect(new URL(request.url).searchParams.get("sandboxId")!);
  return Response.json({ previewUrl: await ensureAppDevServer(sandbox) });
});

const routes: Record<string, Handler> = {
  "POST /api/backend/dev/start": (request) => devStartRoute(request, undefined),
  "GET /api/backend/status": (request) => statusRoute(request, undefined),
  "POST /test/app-dev-server": (request) => appDevServerRoute(request, undefined),
  "GET /test/held": async (request) => {
    const release = new URL(request.url).searchParams.get("release")!;
    fs.writeFileSync(`${release}.held`, "");
    while (!fs.existsSync(release)) await delay(50);
    return Response.json({ released: true });
  },
};

async function toRequest(incoming: http.IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === "string") headers.set(name, value);
  const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD";
  return new Request(new URL(incoming.url ?? "/", base), { method: incoming.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await startServer();
  let base = "";
  const server = http.createServer((incoming, outgoing) => {
    void (async () => {
      const request = await toRequest(incoming, base);
      const handler = routes[`${request.method} ${new URL(request.url).pathname}`];
      const response = handler ? await handler(request) : Response.json({ error: { code: "not_found", message: "No such route." } }, { status: 404 });
      outgoing.writeHead(response.status, Object.fromEntries(response.headers));
      outgoing.end(Buffer.from(await response.arrayBuffer()));
    })();
  });
  (globalThis as Record<symbol, unknown>)[HTTP_SERVER_KEY] = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  console.log(`READY ${base}`);
}
