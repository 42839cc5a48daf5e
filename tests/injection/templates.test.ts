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
  it("lists convex.json and the convex/ folder (the names the convex CLI reads), relative to the app root, sorted", () => {
    expect(getBackendTemplateFiles().map((file) => file.path)).toEqual([
      "convex.json",
      "convex/auth.config.ts",
      "convex/http.ts",
      "convex/schema.ts",
      "convex/tsconfig.json",
    ]);
  });

  it("convex.json points the functions at convex/", () => {
    expect(JSON.parse(files().get("convex.json")!)).toEqual({ functions: "convex/" });
  });

  it("convex/schema.ts default-exports a schema with an empty table list", () => {
    const exported = defaultExport(files().get("convex/schema.ts")!).declaration;
    expect(exported).toMatchObject({ type: "CallExpression", callee: { name: "defineSchema" } });
    expect(exported).toMatchObject({ arguments: [{ type: "ObjectExpression", properties: [] }] });
  });

  it("convex/auth.config.ts default-exports an object with no providers", () => {
    const exported = defaultExport(files().get("convex/auth.config.ts")!).declaration;
    expect(exported).toMatchObject({
      type: "ObjectExpression",
      properties: [{ key: { name: "providers" }, value: { type: "ArrayExpression", elements: [] } }],
    });
  });

  it("convex/http.ts creates an HTTP router and default-exports it", () => {
    const source = files().get("convex/http.ts")!;
    expect(source).toMatch(/const http = httpRouter\(\);/);
    expect(defaultExport(source).declaration).toMatchObject({ type: "Identifier", name: "http" });
  });

  it("convex/tsconfig.json stands alone in the CLI's shape: its own include, no app files, no ambient types", () => {
    const tsconfig = JSON.parse(files().get("convex/tsconfig.json")!);
    expect(tsconfig).not.toHaveProperty("extends");
    expect(tsconfig).toMatchObject({
      include: ["./**/*"],
      exclude: ["./_generated"],
      compilerOptions: { jsx: "react-jsx", types: [], noEmit: true, isolatedModules: true, module: "ESNext", moduleResolution: "Bundler" },
    });
  });

  it("returns copies, so a caller cannot change what the next caller gets", () => {
    getBackendTemplateFiles()[0].content = "changed";
    expect(files().get("convex.json")).not.toBe("changed");
  });
});
