import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GET as docsRoute } from "@/app/api/docs/route";
import { GET as openApiRoute } from "@/app/api/openapi.json/route";
import { openApiDocument } from "@/lib/api-contract/document";
import { route } from "@/lib/http";

const API_DIR = path.resolve("app", "api");

/** Every `export const METHOD = route(…)` of app/api, as `method /api/path/{id}`. */
function implementedOperations(): string[] {
  const files = fs.readdirSync(API_DIR, { recursive: true, encoding: "utf8" }).filter((file) => path.basename(file) === "route.ts");
  return files.flatMap((file) => {
    const routePath = `/api/${path.dirname(file).split(path.sep).join("/")}`.replace(/\[(\w+)\]/g, "{$1}");
    const source = fs.readFileSync(path.join(API_DIR, file), "utf8");
    return [...source.matchAll(/export const (GET|POST|PUT|PATCH|DELETE) = route\b/g)].map(([, method]) => `${method.toLowerCase()} ${routePath}`);
  });
}

describe("the OpenAPI document", () => {
  it("documents every route handler of app/api, and nothing else", () => {
    const documented = Object.entries(openApiDocument().paths ?? {}).flatMap(([routePath, item]) => Object.keys(item as object).map((method) => `${method} ${routePath}`));
    expect(documented.sort()).toEqual(implementedOperations().sort());
  });

  it("is served as OpenAPI 3.1 JSON, and as a page that links every schema it references", async () => {
    const response = await openApiRoute(new Request("http://localhost/api/openapi.json"), undefined);
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document.openapi).toBe("3.1.0");
    expect(document.paths["/api/projects/{id}/system-prompt"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/SystemPrompt" });

    const page = await docsRoute(new Request("http://localhost/api/docs"), undefined);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("/api/projects/{id}/system-prompt");
    expect(html).not.toMatch(/<script/i);
    for (const [, name] of html.matchAll(/href="#schema-(\w+)"/g)) expect(html).toContain(`id="schema-${name}"`);
  });

  it("fails a route test whose answer drifts from the document (tests/setup.ts checks every route() answer)", async () => {
    const drifted = route(async () => Response.json({ ok: true, store: "pglite", extra: 1 }));
    await expect(drifted(new Request("http://localhost/api/health"), undefined)).rejects.toThrow(/does not match the document.*extra/s);
    const undocumented = route(async () => Response.json({}));
    await expect(undocumented(new Request("http://localhost/api/nowhere"), undefined)).rejects.toThrow(/not in the OpenAPI document/);
    const wrongError = route(async () => Response.json({ error: "nope" }, { status: 500 }));
    await expect(wrongError(new Request("http://localhost/api/health"), undefined)).rejects.toThrow(/does not match/);
  });
});
