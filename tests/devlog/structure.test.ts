import { describe, expect, it } from "vitest";
import { createLogScanner } from "@/lib/devlog/scanner";
import { appRelativePath, structureError } from "@/lib/devlog/structure";
import {
  CLI_TYPECHECK_FAILED,
  ESBUILD_SYNTAX,
  ESBUILD_UNRESOLVED,
  FUNCTION_ERROR,
  TSC_ONE_ERROR,
  TSC_TWO_ERRORS,
  TYPECHECK_OUTPUT,
} from "./recordings";

/** The error groups the scanner makes of `output`, as the reporter receives them. */
function groupsOf(...chunks: string[]): string[] {
  const groups: string[] = [];
  const scanner = createLogScanner({ onError: (message) => groups.push(message), detailWaitMs: 60_000 });
  for (const chunk of chunks) scanner.write(chunk);
  scanner.flush();
  return groups;
}

describe("structureError over recorded tool output", () => {
  it("a failed typecheck: the CLI's announcement and tsc's errors are one group, with file, line, column and tsc's code frame", () => {
    const groups = groupsOf(CLI_TYPECHECK_FAILED, "- Collecting TypeScript errors\n", TSC_ONE_ERROR);
    expect(groups).toHaveLength(1);
    expect(structureError(groups[0], "backend-dev")).toEqual({
      kind: "typecheck",
      file: "convex/count.ts",
      line: 3,
      column: 14,
      codeFrame: '3 export const total: number = "many";\n               ~~~~~',
      fingerprint: expect.stringMatching(/^[0-9a-f]{24}$/),
    });
  });

  it("the CLI's whole output for a type error (recorded from `npx convex dev`) gives the same structure", () => {
    const groups = groupsOf(...TYPECHECK_OUTPUT.map(([, chunk]) => chunk));
    expect(groups).toHaveLength(1);
    expect(structureError(groups[0], "backend-dev")).toMatchObject({ kind: "typecheck", file: "convex/count.ts", line: 3, column: 69 });
    expect(structureError(groups[0], "backend-dev").codeFrame).toMatch(/^3 export const count = query\(.*\n {70}~~~~~$/);
  });

  it("two tsc errors: located at the first, and another fingerprint than the first alone", () => {
    const [one] = groupsOf(CLI_TYPECHECK_FAILED, TSC_ONE_ERROR);
    const [two] = groupsOf(CLI_TYPECHECK_FAILED, TSC_TWO_ERRORS);
    const structured = structureError(two, "backend-dev");
    expect(structured).toMatchObject({ kind: "typecheck", file: "convex/count.ts", line: 3, column: 14 });
    expect(structured.fingerprint).not.toBe(structureError(one, "backend-dev").fingerprint);
  });

  it("esbuild's syntax error: kind bundle, its 0-based column counted from 1, its code frame", () => {
    const [group] = groupsOf("- Preparing Convex functions...\n", ESBUILD_SYNTAX, "✖ esbuild failed: Error: Build failed with 1 error:\n");
    expect(structureError(group, "backend-dev")).toEqual({
      kind: "bundle",
      file: "convex/msg.ts",
      line: 1,
      column: 27,
      codeFrame: "      1 │ export const list = () => ;\n        ╵                           ^",
      fingerprint: expect.any(String),
    });
  });

  it("esbuild's unresolved import", () => {
    const [group] = groupsOf(ESBUILD_UNRESOLVED);
    expect(structureError(group, "backend-dev")).toMatchObject({ kind: "bundle", file: "convex/imp.ts", line: 1, column: 19 });
  });

  it("a function's uncaught error: kind function-runtime, the function's name, the file of its stack frame", () => {
    const [group] = groupsOf(FUNCTION_ERROR("5/21/2025, 1:07:40 PM"));
    expect(structureError(group, "backend-dev")).toEqual({
      kind: "function-runtime",
      functionName: "messages:send",
      file: "convex/messages.ts",
      line: 12,
      column: 11,
      fingerprint: expect.any(String),
    });
  });

  it("a rejected push names the module of the stack frame; the deployment's URL is no file", () => {
    const output = [
      "✖ Error: Unable to start push to http://127.0.0.1:3210",
      "✖ Error fetching POST  http://127.0.0.1:3210/api/deploy2/start_push 400 Bad Request: InvalidModules: Loading the pushed modules encountered the following error:",
      "Failed to analyze broken.js: Uncaught Error: broken at import",
      "    at <anonymous> (../convex/broken.ts:2:6)",
      "",
    ].join("\n");
    const [group] = groupsOf(output);
    expect(structureError(group, "backend-dev")).toMatchObject({ kind: "push", file: "convex/broken.ts", line: 2, column: 6 });
    expect(structureError("✖ Error: Unable to start push to http://127.0.0.1:3210", "backend-dev")).toEqual({ kind: "push", fingerprint: expect.any(String) });
  });

  it("schema errors of a push", () => {
    const message = "✖ Error: Unable to finish push\nSchema validation failed.\nDocument with ID \"k57a\" in table \"messages\" does not match the schema: Object is missing the required field `author`.";
    expect(structureError(message, "backend-dev").kind).toBe("schema");
  });

  it("app errors: Metro's unresolved import and Babel's syntax error are app-bundle with the app's file; others app-runtime", () => {
    const resolve = [
      "Web Bundling failed 2103ms node_modules/expo-router/entry.js (812 modules)",
      'Unable to resolve module ./components/Button from /home/user/app/app/index.tsx: ',
      "",
      "  1 | import { StyleSheet, Text, View } from \"react-native\";",
      '> 2 | import Button from "./components/Button";',
      "    |                     ^",
    ].join("\n");
    expect(structureError(resolve, "app-dev")).toMatchObject({ kind: "app-bundle", file: "app/index.tsx", line: 2 });
    expect(structureError("SyntaxError: /home/user/app/app/index.tsx: Unexpected token (3:4)", "app-dev")).toMatchObject({
      kind: "app-bundle",
      file: "app/index.tsx",
      line: 3,
      column: 5,
    });
    expect(structureError("TypeError: Cannot read properties of undefined (reading 'map')", "app-dev")).toEqual({ kind: "app-runtime", fingerprint: expect.any(String) });
  });
});

describe("fingerprints", () => {
  it("stay the same when only times, durations and positions change", () => {
    const [first] = groupsOf(FUNCTION_ERROR("5/21/2025, 1:07:40 PM"));
    const [again] = groupsOf(FUNCTION_ERROR("5/21/2025, 11:59:03 AM").replace(":12:11", ":14:3"));
    expect(structureError(again, "backend-dev").fingerprint).toBe(structureError(first, "backend-dev").fingerprint);
    // The error moved two lines down: the same error.
    const moved = TSC_ONE_ERROR.replace("\u001b[93m3\u001b[0m:", "\u001b[93m5\u001b[0m:").replace("\u001b[7m3\u001b[0m", "\u001b[7m5\u001b[0m");
    const [atThree] = groupsOf(CLI_TYPECHECK_FAILED, TSC_ONE_ERROR);
    const [atFive] = groupsOf(CLI_TYPECHECK_FAILED, moved);
    expect(structureError(atFive, "backend-dev")).toMatchObject({ line: 5 });
    expect(structureError(atFive, "backend-dev").fingerprint).toBe(structureError(atThree, "backend-dev").fingerprint);
  });

  it("differ with the message, the file and the source", () => {
    const base = structureError("convex/a.ts:1:1 - error TS2322: Type 'string' is not assignable to type 'number'.", "backend-dev").fingerprint;
    expect(structureError("convex/b.ts:1:1 - error TS2322: Type 'string' is not assignable to type 'number'.", "backend-dev").fingerprint).not.toBe(base);
    expect(structureError("convex/a.ts:1:1 - error TS2322: Type 'number' is not assignable to type 'string'.", "backend-dev").fingerprint).not.toBe(base);
    expect(structureError("convex/a.ts:1:1 - error TS2322: Type 'string' is not assignable to type 'number'.", "app-dev").fingerprint).not.toBe(base);
  });
});

describe("appRelativePath", () => {
  it.each([
    ["/home/user/app/convex/x.ts", "convex/x.ts"],
    ["../convex/x.ts", "convex/x.ts"],
    ["convex/x.ts", "convex/x.ts"],
    ["/home/user/app/node_modules/convex/dist/x.js", null],
    ["/usr/lib/node/x.js", null],
  ])("%s → %s", (path, relative) => {
    expect(appRelativePath(path)).toBe(relative);
  });
});
