import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { injectBackendWrapper } from "@/lib/injection";

// Just enough of the app's dependencies for the compiler; the signatures follow convex@1.x.
const STUBS = `
declare module "convex/react" {
  import type { ReactNode } from "react";
  export class ConvexReactClient {
    constructor(address: string, options?: { unsavedChangesWarning?: boolean });
  }
  export function ConvexProvider(props: { client: ConvexReactClient; children?: ReactNode }): ReactNode;
}
declare module "@react-navigation/native" {
  import type { ReactNode } from "react";
  export interface Theme { dark: boolean }
  export const DarkTheme: Theme;
  export const DefaultTheme: Theme;
  export function ThemeProvider(props: { value: Theme; children?: ReactNode }): ReactNode;
}
declare module "expo-router" {
  export function Stack(props: { screenOptions?: { headerShown?: boolean } }): null;
}
`;

const LAYOUT = `import { DarkTheme, DefaultTheme, ThemeProvider } from "@react-navigation/native";
import { Stack } from "expo-router";
import { useState } from "react";

export default function RootLayout() {
  const [dark] = useState(false);
  const [ready] = useState(true);

  if (!ready) {
    return null;
  }

  return (
    <ThemeProvider value={dark ? DarkTheme : DefaultTheme}>
      <Stack screenOptions={{ headerShown: false }} />
    </ThemeProvider>
  );
}
`;

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "injection-typecheck-"));
afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

function typeErrors(code: string): string[] {
  const layout = path.join(workDir, "_layout.tsx");
  const stubs = path.join(workDir, "stubs.d.ts");
  fs.writeFileSync(layout, code);
  fs.writeFileSync(stubs, STUBS);
  const types = path.join(process.cwd(), "node_modules", "@types");
  const program = ts.createProgram([layout, stubs], {
    strict: true,
    noEmit: true,
    jsx: ts.JsxEmit.ReactJSX,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    typeRoots: [types],
    types: ["node", "react"],
    paths: { react: [path.join(types, "react")], "react/*": [path.join(types, "react", "*")] },
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}

describe("injected TSX", () => {
  it("type-checks in strict mode, like the layout did before", () => {
    expect(typeErrors(LAYOUT)).toEqual([]);
    const { code } = injectBackendWrapper(LAYOUT, "app/_layout.tsx");
    expect(typeErrors(code)).toEqual([]);
  });
});
