import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as catchAll from "@/app/api/[...path]/route";
import { POST as createProjectRoute } from "@/app/api/projects/route";
import { methodNotAllowed, parseJsonBody } from "@/lib/http";
import { proxy } from "@/proxy";
import { NextRequest } from "next/server";
import { getStore } from "@/lib/store";
import { z } from "zod";
import { createTestUser } from "../helpers/users";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const BASE = "http://localhost:3000";
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

let owner: Awaited<ReturnType<typeof createTestUser>>;

beforeAll(async () => {
  owner = await createTestUser(await getStore());
});

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name === "route.ts" ? [full] : [];
  });
}

describe("JSON bodies", () => {
  const schema = z.object({ name: z.string() });
  const body = JSON.stringify({ name: "x" });
  const post = (contentType: string | null, text = body) =>
    new Request(`${BASE}/x`, { method: "POST", headers: contentType ? { "content-type": contentType } : {}, body: text });

  it("are refused with 415 unless the content type is JSON (a cross-site form can send text/plain)", async () => {
    for (const contentType of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp", null]) {
      await expect(parseJsonBody(post(contentType), schema)).rejects.toMatchObject({ status: 415, code: "unsupported_media_type" });
    }
    for (const contentType of ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"]) {
      expect(await parseJsonBody(post(contentType), schema)).toEqual({ name: "x" });
    }
  });

  it("answer 415 in the error shape through a route, and create nothing", async () => {
    const response = await createProjectRoute(
      new Request(`${BASE}/api/projects`, { method: "POST", headers: owner.headers, body: JSON.stringify({ name: "as text" }) }),
      undefined,
    );
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ error: { code: "unsupported_media_type", message: expect.stringContaining("application/json") } });
  });

  it("may be left out where a route allows it, whatever the content type; a non-empty one must be JSON", async () => {
    for (const contentType of [null, "text/plain", "application/json"]) {
      expect(await parseJsonBody(post(contentType, ""), z.object({ a: z.string().optional() }), { optional: true })).toEqual({});
    }
    await expect(parseJsonBody(post("text/plain"), schema, { optional: true })).rejects.toMatchObject({ status: 415 });
    await expect(parseJsonBody(post("application/json", "{"), schema, { optional: true })).rejects.toMatchObject({ status: 400, code: "invalid_json" });
  });
});

describe("wrong methods and unknown API paths", () => {
  it("every /api route answers every method itself, so Next.js never sends its empty 405", async () => {
    const files = routeFiles(path.join(ROOT, "app", "api"));
    expect(files.length).toBeGreaterThan(15);
    for (const file of files) {
      const handlers = (await import(file)) as Record<string, unknown>;
      const missing = METHODS.filter((method) => typeof handlers[method] !== "function" && !(method === "HEAD" && typeof handlers.GET === "function"));
      expect({ route: path.relative(ROOT, file), missing }).toEqual({ route: path.relative(ROOT, file), missing: [] });
    }
  });

  it("a wrong method gets 405 in the error shape with an Allow header", async () => {
    const { PUT, HEAD } = methodNotAllowed(["POST"]);
    const response = await PUT(new Request(`${BASE}/api/cloud/enable`, { method: "PUT" }));
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await response.json()).toEqual({ error: { code: "method_not_allowed", message: "PUT is not supported here; use POST, OPTIONS." } });
    expect((await HEAD(new Request(`${BASE}/api/cloud/enable`, { method: "HEAD" }))).status).toBe(405);
    expect(Object.keys(methodNotAllowed(["GET", "POST"])).sort()).toEqual(["DELETE", "PATCH", "PUT"]);
    expect(methodNotAllowed(["GET"]).POST).toBeTypeOf("function");
    const allow = (await methodNotAllowed(["GET", "DELETE"]).POST(new Request(BASE, { method: "POST" }))).headers.get("allow");
    expect(allow).toBe("GET, HEAD, DELETE, OPTIONS");
  });

  it("an unknown /api path gets the JSON 404 for every method", async () => {
    for (const method of [...METHODS, "OPTIONS"] as const) {
      const response = await catchAll[method](new Request(`${BASE}/api/projects/x/nope`, { method }));
      expect(response.status).toBe(404);
      if (method !== "HEAD") expect(await response.json()).toEqual({ error: { code: "route_not_found", message: "No API route at /api/projects/x/nope." } });
    }
  });
});

describe("paths that do not percent-decode", () => {
  it("get the JSON 400 from the proxy; decodable ones go on to their route", async () => {
    for (const pathname of ["/blob/%ff", "/api/projects/%ff", "/api/projects/%zz/x", "/blob/a%e2%82"]) {
      const response = proxy(new NextRequest(`${BASE}${pathname}`));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: { code: "invalid_path", message: "The URL path is not correctly percent-encoded." } });
    }
    for (const pathname of ["/blob/a%20b.png", "/blob/%E2%82%AC.png", "/api/projects/%41"]) {
      expect(proxy(new NextRequest(`${BASE}${pathname}`)).headers.get("x-middleware-next")).toBe("1");
    }
  });
});
