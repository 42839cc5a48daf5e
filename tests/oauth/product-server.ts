import type http from "node:http";
import { GET as oauthCallback } from "@/app/backend/callback/route";
import { GET as oauthConnect } from "@/app/backend/connect/route";
import { GET as emulatorGet, POST as emulatorPost } from "@/app/emulator/[...path]/route";
import { startHttpServer } from "../helpers/http-server";

type Handler = (request: Request) => Promise<Response>;

/** The routes of the OAuth dance, as Next.js would dispatch them; the dashboard page is a stub. */
function handlerFor(method: string, pathname: string): Handler | undefined {
  if (method === "GET" && pathname === "/backend/connect") return (request) => oauthConnect(request, undefined);
  if (method === "GET" && pathname === "/backend/callback") return (request) => oauthCallback(request, undefined);
  if (pathname.startsWith("/emulator/")) return method === "POST" ? emulatorPost : emulatorGet;
  if (method === "GET" && pathname.startsWith("/projects/")) return async () => new Response("project dashboard");
  return undefined;
}

async function toRequest(req: http.IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  return new Request(origin + (req.url ?? "/"), { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
}

/**
 * The product served over loopback HTTP with only what the OAuth flow touches: the connect and
 * callback routes, the embedded emulator at /emulator (management API + consent page) and a
 * stand-in for the project dashboard page.
 */
export async function startProductServer() {
  const server = await startHttpServer((req, res) => {
    const origin = `http://${req.headers.host}`;
    const handler = handlerFor(req.method ?? "GET", new URL(req.url ?? "/", origin).pathname);
    (handler ? toRequest(req, origin).then(handler) : Promise.resolve(new Response("not found", { status: 404 })))
      .then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
  });
  return server;
}
