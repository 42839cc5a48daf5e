import { describe, expect, it } from "vitest";
import { errorResponse } from "@/lib/http";
import { injectBackendWrapper, InjectionError } from "@/lib/injection";
import { parseLayout, wrappedElements } from "./helpers";

function refusal(source: string, filename = "app/_layout.tsx"): InjectionError {
  try {
    injectBackendWrapper(source, filename);
  } catch (error) {
    if (error instanceof InjectionError) return error;
    throw error;
  }
  throw new Error("expected an InjectionError");
}

const SLOT_LAYOUT = `import { Slot } from "expo-router";

export default function RootLayout() {
  return <Slot />;
}
`;

describe("injectBackendWrapper edge cases", () => {
  it("refuses files that cannot hold JSX", () => {
    expect(refusal("export default function Layout() {}\n", "app/_layout.ts")).toMatchObject({ code: "layout_unsupported_file" });
    expect(refusal(SLOT_LAYOUT, "app/_layout.vue")).toMatchObject({ code: "layout_unsupported_file" });
  });

  it("refuses a layout with a syntax error and says where it is", () => {
    const error = refusal("export default function Layout() {\n  return <View>;\n}\n");
    expect(error.code).toBe("layout_parse_error");
    expect(error.message).toMatch(/app\/_layout\.tsx does not parse \(.*\(2:/);
  });

  it("refuses a default export that is not a function", () => {
    expect(refusal('export default { name: "app" };\n')).toMatchObject({ code: "layout_unsupported_export" });
    expect(refusal("let Layout;\nexport default Layout;\n")).toMatchObject({ code: "layout_unsupported_export" });
    expect(refusal("export default async function Layout() {\n  return null;\n}\n").message).toContain("async");
  });

  it("refuses a component that never returns JSX", () => {
    expect(refusal("export default function Layout() {\n  return null;\n}\n")).toMatchObject({ code: "layout_unsafe_jsx" });
  });

  it("refuses when the theme provider sits in a same-file component whose return cannot be analysed", () => {
    const source = `import { DefaultTheme, ThemeProvider } from "@react-navigation/native";
import { Stack } from "expo-router";

function Shell() {
  const tree = <ThemeProvider value={DefaultTheme}><Stack /></ThemeProvider>;
  return tree;
}

export default function RootLayout() {
  return <Shell />;
}
`;
    const error = refusal(source);
    expect(error.code).toBe("layout_unsafe_jsx");
    expect(error.message).toContain("app/_layout.tsx:6");
  });

  it("treats a type-only import of a needed name as a collision", () => {
    for (const typeImport of ['import type { ConvexProvider } from "convex/react";', 'import { type ConvexProvider } from "convex/react";']) {
      expect(refusal(`${typeImport}\n${SLOT_LAYOUT}`)).toMatchObject({ code: "layout_name_collision" });
    }
  });

  it("adds a named import next to a namespace import of convex/react", () => {
    const { code } = injectBackendWrapper(`import * as Convex from "convex/react";\n${SLOT_LAYOUT}`, "app/_layout.tsx");
    expect(code).toContain('import * as Convex from "convex/react";');
    expect(code).toContain('import { ConvexProvider, ConvexReactClient } from "convex/react";');
  });

  it("keeps a directive with a single semicolon", () => {
    const { code } = injectBackendWrapper(`"use strict";\n${SLOT_LAYOUT}`, "app/_layout.jsx");
    expect(code.startsWith('"use strict";\nimport { Slot } from "expo-router";')).toBe(true);
  });

  it("wraps an anonymous arrow default export", () => {
    const source = `import { DefaultTheme, ThemeProvider } from "@react-navigation/native";
import { Slot } from "expo-router";

export default () => (
  <ThemeProvider value={DefaultTheme}>
    <Slot />
  </ThemeProvider>
);
`;
    const { code } = injectBackendWrapper(source, "app/_layout.tsx");
    expect(wrappedElements(parseLayout(code, "app/_layout.tsx"))).toEqual(["ThemeProvider"]);
    expect(code).toContain("export default () => (\n  <BackendWrapper>\n    <ThemeProvider value={DefaultTheme}>");
  });

  it("is answered by routes as 422 with the error body shape", async () => {
    const response = errorResponse(refusal("export function Layout() {}\n"));
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      error: {
        code: "layout_no_default_export",
        message: "app/_layout.tsx has no default export; the root layout must default-export its component.",
      },
    });
  });
});
