import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { ExistingProviderError, injectBackendWrapper, InjectionError, type InjectionErrorCode } from "@/lib/injection";
import { parseLayout, withoutInjection, wrappedElements } from "./helpers";

const FIXTURES = path.join(import.meta.dirname, "fixtures");
const read = (name: string) => fs.readFileSync(path.join(FIXTURES, name), "utf8");

/** Every fixture that can be injected, with the elements that must end up directly inside `<BackendWrapper>`. */
const INJECTABLE: Record<string, string[]> = {
  "alias-without-suffix.tsx": ["NavTheme"],
  "aliased-theme-provider.tsx": ["NavigationThemeProvider"],
  "already-injected.tsx": ["ThemeProvider"],
  "anonymous-default.tsx": ["ThemeProvider"],
  "arrow-export-at-end.tsx": ["ThemeProvider"],
  "arrow-expression-body.tsx": ["ThemeProvider"],
  "comments-everywhere.tsx": ["ThemeProvider"],
  "conditional-return.tsx": ["ThemeProvider"],
  "custom-app-theme-provider.tsx": ["AppThemeProvider"],
  "existing-convex-import.tsx": ["ThemeProvider"],
  "expo-default-template.tsx": ["ThemeProvider"],
  "export-as-default.tsx": ["ThemeProvider"],
  "four-space-indent.jsx": ["ThemeProvider"],
  "javascript-layout.jsx": ["ThemeProvider"],
  "js-extension-arrow.js": ["ThemeProvider"],
  "loading-view-and-theme.tsx": ["View", "ThemeProvider"],
  "local-providers-component.tsx": ["ThemeProvider"],
  "logical-and-return.tsx": ["ThemeProvider"],
  "memo-inline-function.tsx": ["ThemeProvider"],
  "multiline-last-import.tsx": ["ThemeProvider"],
  "namespace-theme-provider.tsx": ["Navigation.ThemeProvider"],
  "nested-theme-providers.tsx": ["ThemeProvider"],
  "no-theme-fragment.tsx": ["<>"],
  "no-theme-provider.tsx": ["SafeAreaProvider"],
  "paper-provider-without-theme-provider.tsx": ["GestureHandlerRootView"],
  "partially-injected.tsx": ["ThemeProvider"],
  "providers-around-theme.tsx": ["ThemeProvider"],
  "providers-inside-theme.tsx": ["ThemeProvider"],
  "query-client-provider.tsx": ["ThemeProvider"],
  "root-layout-nav.tsx": ["ThemeProvider"],
  "self-closing-slot.tsx": ["Slot"],
  "semicolon-free.tsx": ["ThemeProvider"],
  "sentry-wrapped.tsx": ["ThemeProvider"],
  "several-returns.tsx": ["ThemeProvider", "ThemeProvider"],
  "single-line-theme.tsx": ["ThemeProvider"],
  "tab-indented.tsx": ["ThemeProvider"],
  "template-literals-and-comments.tsx": ["ThemeProvider"],
  "theme-in-conditional-child.tsx": ["ThemeProvider"],
  "theme-provider-beside-routes.tsx": ["GestureHandlerRootView"],
  "themed-status-bar-sibling.tsx": ["<>"],
  "typed-fc-component.tsx": ["ThemeProvider"],
};

/** Fixtures with no safe place for the wrapper: the error code and a phrase the message must contain. */
const REFUSED: Record<string, [InjectionErrorCode, string]> = {
  "fail-class-component.tsx": ["layout_unsupported_export", "class component"],
  "fail-foreign-convex-provider.tsx": ["layout_name_collision", "`ConvexProvider`"],
  "fail-imported-default.tsx": ["layout_unsupported_export", 'imported from "@/features/shell/RootLayout"'],
  "fail-no-default-export.tsx": ["layout_no_default_export", "has no default export"],
  "fail-own-backend-wrapper.tsx": ["layout_name_collision", "`BackendWrapper`"],
  "fail-reexported-default.tsx": ["layout_unsupported_export", "re-exported"],
  "fail-returns-call.tsx": ["layout_unsafe_jsx", "`renderWithProviders(<Stack />)`"],
  "fail-returns-variable.tsx": ["layout_unsafe_jsx", "`content`"],
  "fail-shadowed-client-name.tsx": ["layout_name_collision", "`backendClient`"],
};

/**
 * Layouts with their own Convex provider, kept as the only client: the env read their client used
 * before, renamed to process.env.EXPO_PUBLIC_CONVEX_URL (null when it already read that).
 */
const OWN_PROVIDER: Record<string, string | null> = {
  "existing-better-auth-provider.tsx": "process.env.CONVEX_URL",
  "existing-clerk-provider.tsx": null,
  "existing-client-in-app-providers.tsx": "process.env.EXPO_PUBLIC_BACKEND_URL",
  "existing-client-in-component.tsx": "process.env.CONVEX_URL",
  "existing-convex-auth-provider.tsx": "process.env.CONVEX_URL",
  "existing-convex-provider.tsx": null,
  "existing-convex-provider-javascript.jsx": "process.env.EXPO_PUBLIC_CONVEX_DEPLOYMENT_URL",
  "existing-provider-with-auth.tsx": 'process.env["NEXT_PUBLIC_CONVEX_URL"]',
};

/** Layouts whose own client reads EXPO_PUBLIC_CONVEX_URL through a same-file constant: already wired, kept byte for byte. */
const WIRED_THROUGH_CONSTANT = ["existing-client-url-constant.tsx", "existing-auth0-provider-url-constant.tsx"];

/** Layouts with their own Convex provider whose client cannot be repointed: a phrase the 409 message must contain. */
const CONFLICTING_PROVIDER: Record<string, string> = {
  "fail-convex-client-from-config.tsx": "`Constants.expoConfig?.extra?.convexUrl`",
  "fail-convex-client-imported.tsx": 'its client `convex` is imported from "@/lib/convex", not created in this file',
  "fail-clerk-provider-imported-client.tsx": 'its client `convex` is imported from "../lib/convex", not created in this file',
  "fail-convex-client-url-constant-literal.tsx": '`convexUrl` (`convexUrl = "https://happy-otter-123.convex.cloud"`), which reads no environment variable',
  "fail-convex-client-literal-url.tsx": '`"https://happy-otter-123.convex.cloud"`',
};

describe("fixture set", () => {
  it("has at least 25 injectable layouts and every fixture file is listed exactly once", () => {
    const files = fs.readdirSync(FIXTURES).sort();
    expect(Object.keys(INJECTABLE).length).toBeGreaterThanOrEqual(25);
    const listed = [...[INJECTABLE, REFUSED, OWN_PROVIDER, CONFLICTING_PROVIDER].flatMap((group) => Object.keys(group)), ...WIRED_THROUGH_CONSTANT];
    expect(listed.sort()).toEqual(files);
  });
});

describe.each(Object.entries(INJECTABLE))("injectBackendWrapper on %s", (name, expectedWrapped) => {
  const source = read(name);
  const first = injectBackendWrapper(source, name);

  it("returns code that parses in the layout's own language", () => {
    expect(() => parseLayout(first.code, name)).not.toThrow();
  });

  it("wraps exactly the expected elements", () => {
    expect(wrappedElements(parseLayout(first.code, name))).toEqual(expectedWrapped);
  });

  it("changes nothing else: without the injected parts the program equals the original", () => {
    expect(withoutInjection(parseLayout(first.code, name))).toEqual(withoutInjection(parseLayout(source, name)));
  });

  it("adds the client from EXPO_PUBLIC_CONVEX_URL and the wrapper exactly once", () => {
    expect(first.code.match(/function BackendWrapper\(/g)).toHaveLength(1);
    expect(first.code.match(/const backendClient = process\.env\.EXPO_PUBLIC_CONVEX_URL/g)).toHaveLength(1);
    expect(first.code.match(/unsavedChangesWarning: false/g)).toHaveLength(1);
    expect(first.code).toMatch(/import \{[^}]*\bConvexProvider, ConvexReactClient\b[^}]*\} from ["']convex\/react["']/);
  });

  it("is idempotent: a second run reports no change and returns identical code", () => {
    const second = injectBackendWrapper(first.code, name);
    expect(second).toEqual({ changed: false, code: first.code });
  });

  it("matches the reviewed output", async () => {
    await expect(first.code).toMatchFileSnapshot(path.join("__snapshots__", `${name}.snap`));
  });
});

describe("already injected layouts", () => {
  it("reports no change and returns the source untouched, even when reformatted", () => {
    const source = read("already-injected.tsx");
    expect(injectBackendWrapper(source, "already-injected.tsx")).toEqual({ changed: false, code: source });
  });
});

describe.each(Object.entries(REFUSED))("injectBackendWrapper refuses %s", (name, [code, phrase]) => {
  it(`throws ${code} (HTTP 422) with a message naming the file`, () => {
    const error = (() => {
      try {
        injectBackendWrapper(read(name), `app/${name}`);
      } catch (thrown) {
        return thrown;
      }
      throw new Error("expected injectBackendWrapper to throw");
    })();
    expect(error).toBeInstanceOf(InjectionError);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ name: "InjectionError", status: 422, code });
    expect((error as Error).message).toContain(`app/${name}`);
    expect((error as Error).message).toContain(phrase);
  });
});

const clientConstructions = (code: string) => code.match(/new ConvexReactClient\(/g) ?? [];

describe.each(Object.entries(OWN_PROVIDER))("injectBackendWrapper keeps the app's own provider in %s", (name, previousRead) => {
  const source = read(name);
  const result = injectBackendWrapper(source, `app/${name}`);

  it("adds no second client and no BackendWrapper", () => {
    expect(result.code).not.toContain("BackendWrapper");
    expect(clientConstructions(result.code)).toHaveLength(clientConstructions(source).length);
  });

  it("leaves the client on EXPO_PUBLIC_CONVEX_URL, renaming only the reads in its declaration", () => {
    expect(result.code).toMatch(/new ConvexReactClient\(process\.env\.EXPO_PUBLIC_CONVEX_URL\b/);
    if (previousRead === null) {
      expect(result).toEqual({ changed: false, code: source });
      return;
    }
    const variable = /\w+(?="?\]?$)/.exec(previousRead)![0];
    expect(result.changed).toBe(true);
    expect(result.note).toBe(`app/${name}: the app's ConvexReactClient now reads process.env.EXPO_PUBLIC_CONVEX_URL (was process.env.${variable}).`);
    // The fixtures read EXPO_PUBLIC_CONVEX_URL nowhere else, so undoing the rename gives the source back.
    expect(result.code.replaceAll("process.env.EXPO_PUBLIC_CONVEX_URL", previousRead)).toBe(source);
  });

  it("is idempotent", () => {
    expect(injectBackendWrapper(result.code, `app/${name}`)).toEqual({ changed: false, code: result.code });
  });

  it("matches the reviewed output", async () => {
    await expect(result.code).toMatchFileSnapshot(path.join("__snapshots__", `${name}.snap`));
  });
});

describe.each(WIRED_THROUGH_CONSTANT)("injectBackendWrapper keeps %s as it is", (name) => {
  it("reports no change, adds no client or wrapper, and returns the source byte for byte", () => {
    const source = read(name);
    expect(injectBackendWrapper(source, `app/${name}`)).toEqual({ changed: false, code: source });
  });
});

describe.each(Object.entries(CONFLICTING_PROVIDER))("injectBackendWrapper refuses %s with 409", (name, phrase) => {
  it("throws layout_has_convex_provider with a message naming the file and what to change", () => {
    const error = (() => {
      try {
        injectBackendWrapper(read(name), `app/${name}`);
      } catch (thrown) {
        return thrown as ExistingProviderError;
      }
      throw new Error("expected injectBackendWrapper to throw");
    })();
    expect(error).toBeInstanceOf(ExistingProviderError);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ name: "ExistingProviderError", status: 409, code: "layout_has_convex_provider" });
    expect(error.message).toContain(`app/${name}:`);
    expect(error.message).toContain(phrase);
    expect(error.message).toContain("new ConvexReactClient(process.env.EXPO_PUBLIC_CONVEX_URL!)");
  });
});
