import crypto from "node:crypto";
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as uploadImageRoute } from "@/app/api/upload-image/route";
import { MAX_UPLOAD_BYTES } from "@/lib/assets/multipart";
import { uploadFastPath } from "@/lib/fast-paths";
import { getStore } from "@/lib/store";
import { startHttpServer } from "../helpers/http-server";
import { createTestUser } from "../helpers/users";

// Served the way `next start` hands a route its request (NextRequestAdapter.fromNodeNextRequest):
// a Request whose body is the Node request stream itself, which Node's fetch iterates.
async function serveUploadRoute(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: req as unknown as BodyInit, duplex: "half" } as RequestInit);
  const response = await uploadImageRoute(request, undefined);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const failures: unknown[] = [];
const record = (error: unknown) => failures.push(error);
let servers: Record<"route" | "fast path", Awaited<ReturnType<typeof startHttpServer>>>;
let headers: Record<string, string>;

beforeAll(async () => {
  process.on("uncaughtException", record);
  process.on("unhandledRejection", record);
  headers = (await createTestUser(await getStore())).headers;
  servers = {
    route: await startHttpServer((req, res) => void serveUploadRoute(req, res)),
    // What `npm start` serves this path with (scripts/server.mjs asks the fast paths first).
    "fast path": await startHttpServer((req, res) => {
      if (!uploadFastPath(req, res)) res.writeHead(501).end();
    }),
  };
});

afterAll(async () => {
  process.off("uncaughtException", record);
  process.off("unhandledRejection", record);
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

describe.each(["route", "fast path"] as const)("an upload over the limit, through the %s", (transport) => {
  it("answers 413 and leaves no uncaught exception or unhandled rejection behind, whatever its size", async () => {
    const server = servers[transport];
    for (const extra of [1, 1000, 40 * 1024, 3 * 1024 * 1024]) {
      const form = new FormData();
      form.set("file", new Blob([crypto.randomBytes(MAX_UPLOAD_BYTES + extra)], { type: "image/png" }), "big.png");
      // A Blob body has a Content-Length, so the bodies just over the limit pass the declared-size check and are streamed.
      const response = await fetch(`${server.url}/api/upload-image`, { method: "POST", headers, body: form });
      expect(response.status).toBe(413);
      expect((await response.json()).error.code).toBe("file_too_large");
    }
    // Node's fetch throws its late close in a microtask of the request that ended the body; the
    // next request's turn of the event loop comes after it.
    expect((await fetch(`${server.url}/api/upload-image`, { method: "POST", headers })).status).toBe(400);
    expect(failures).toEqual([]);
  });
});
