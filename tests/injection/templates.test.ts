import { parse } from "@babel/parser";
import type { Statement } from "@babel/types";
import { describe, expect, it } from "vitest";
import { getBackendTemplateFiles } from "@/lib/injection";

const files = () => new Map(getBackendTemplateFiles().map((file) => [file.path, file.content]));

function defaultExport(source: string): Statement & { type: "ExportDefaultDeclaration" } {
  const body = parse(source, { sourceType: "module", plugins: ["typescript"] }).program.body;
  const statement = body.find((candidate) => candidate.type === "ExportDefaultDeclaration");
  if (!statement) throw new Error("no default export");
  return statement;
}

describe("getBackendTemplateFiles (spec 2.7)", () => {
  it("lists backend.json and the backend/ folder, relative to the app root, sorted", () => {
    expect(getBackendTemplateFiles().map((file) => file.path)).toEqual([
      "backend.json",
      "backend/auth.config.ts",
      "backend/http.ts",
      "backend/schema.ts",
      "backend/tsconfig.json",
    ]);
  });

  it("backend.json points the functions at backend/", () => {
    expect(JSON.parse(files().get("backend.json")!)).toEqual({ functions: "backend/" });
  });

  it("backend/schema.ts default-exports a schema with an empty table list", () => {
    const exported = defaultExport(files().get("backend/schema.ts")!).declaration;
    expect(exported).toMatchObject({ type: "CallExpression", callee: { name: "defineSchema" } });
    expect(exported).toMatchObject({ arguments: [{ type: "ObjectExpression", properties: [] }] });
  });

  it("backend/auth.config.ts default-exports an object with no providers", () => {
    const exported = defaultExport(files().get("backend/auth.config.ts")!).declaration;
    expect(exported).toMatchObject({
      type: "ObjectExpression",
      properties: [{ key: { name: "providers" }, value: { type: "ArrayExpression", elements: [] } }],
    });
  });

  it("backend/http.ts creates an HTTP router and default-exports it", () => {
    const source = files().get("backend/http.ts")!;
    expect(source).toMatch(/const http = httpRouter\(\);/);
    expect(defaultExport(source).declaration).toMatchObject({ type: "Identifier", name: "http" });
  });

  it("backend/tsconfig.json extends the app's and sets the spec's compiler options", () => {
    expect(JSON.parse(files().get("backend/tsconfig.json")!)).toEqual({
      extends: "../tsconfig.json",
      compilerOptions: { module: "esnext", moduleResolution: "bundler", lib: ["ES2021"], target: "ES2021" },
    });
  });

  it("returns copies, so a caller cannot change what the next caller gets", () => {
    getBackendTemplateFiles()[0].content = "changed";
    expect(files().get("backend.json")).not.toBe("changed");
  });
});
