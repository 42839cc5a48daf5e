import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { injectBackendWrapper } from "@/lib/injection";

const FIXTURES = path.join(import.meta.dirname, "fixtures");
const inject = (name: string) => injectBackendWrapper(fs.readFileSync(path.join(FIXTURES, name), "utf8"), name).code;

/** The lines the injection added: from the convex/react import to the end of `BackendWrapper`. */
function injectedBlock(code: string): string {
  const start = code.indexOf("import { ConvexProvider");
  return code.slice(start, code.indexOf("\n}", start) + 2);
}

describe("injected code follows the layout's style", () => {
  it("uses single quotes in a single-quoted file and double quotes in a double-quoted one", () => {
    expect(inject("expo-default-template.tsx")).toContain("import { ConvexProvider, ConvexReactClient } from 'convex/react';");
    expect(inject("no-theme-provider.tsx")).toContain('import { ConvexProvider, ConvexReactClient } from "convex/react";');
  });

  it("writes no semicolons in a semicolon-free file, including the reprinted return", () => {
    const code = inject("semicolon-free.tsx");
    expect(code.split("\n").filter((line) => line.trimEnd().endsWith(";"))).toEqual([]);
  });

  it("indents with tabs in a tab-indented file and with four spaces in a four-space file", () => {
    const tabbed = injectedBlock(inject("tab-indented.tsx"));
    expect(tabbed).toContain("\n\tif (!backendClient) return <>{children}</>;");
    expect(tabbed).not.toMatch(/\n {2}\S/);
    const fourSpaces = injectedBlock(inject("four-space-indent.jsx"));
    expect(fourSpaces).toContain("\n    if (!backendClient) return <>{children}</>;");
  });

  it("keeps Windows line endings throughout", () => {
    const source = fs.readFileSync(path.join(FIXTURES, "expo-default-template.tsx"), "utf8").replace(/\n/g, "\r\n");
    const result = injectBackendWrapper(source, "app/_layout.tsx");
    expect(result.code).toContain("<BackendWrapper>\r\n");
    expect(result.code.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
    expect(injectBackendWrapper(result.code, "app/_layout.tsx")).toEqual({ changed: false, code: result.code });
  });

  it("writes no type annotations into .jsx and .js layouts and keeps them in .tsx layouts", () => {
    for (const name of ["javascript-layout.jsx", "js-extension-arrow.js"]) {
      expect(inject(name)).toContain("function BackendWrapper({ children }) {");
    }
    expect(inject("expo-default-template.tsx")).toContain("function BackendWrapper({ children }: { children: React.ReactNode }) {");
  });

  it("keeps a comment that preceded the wrapped element outside the JSX children", () => {
    expect(inject("comments-everywhere.tsx")).toContain(
      "    // The theme must wrap every navigator.\n    <BackendWrapper>\n      <ThemeProvider",
    );
  });

  it("places the import after a multi-line last import and the code right after it", () => {
    expect(inject("multiline-last-import.tsx")).toContain(
      "} from '@react-navigation/native';\nimport { ConvexProvider, ConvexReactClient } from 'convex/react';\n\n// Cloud backend client",
    );
  });

  it("extends an existing value import of convex/react instead of adding a second one", () => {
    const code = inject("existing-convex-import.tsx");
    expect(code).toContain('import { AuthLoading, Authenticated, ConvexProvider, ConvexReactClient } from "convex/react";');
    expect(code.match(/from "convex\/react"/g)).toHaveLength(1);
  });
});
