/**
 * Output of the real tools, byte for byte (colours included), for the structure tests.
 * tsc 5.9.3 with `--pretty true`, as the `convex` CLI (1.48) runs it after "typecheck via `tsc`
 * failed." (lib/cli/lib/typecheck.js); esbuild 0.28.2, the bundler of the CLI, on the same kind of
 * broken module; the CLI's own lines as its log.js and logs.js print them.
 */

/** The CLI's announcement (`logFailure`) before it runs tsc again for the details. */
export const CLI_TYPECHECK_FAILED = "\u001b[31m✖\u001b[39m TypeScript typecheck via `tsc` failed.\n";

/** `tsc --project convex --pretty true` on a file with one type error. */
export const TSC_ONE_ERROR =
  "\u001b[96mconvex/count.ts\u001b[0m:\u001b[93m3\u001b[0m:\u001b[93m14\u001b[0m - \u001b[91merror\u001b[0m\u001b[90m TS2322: \u001b[0mType 'string' is not assignable to type 'number'.\n\n\u001b[7m3\u001b[0m export const total: number = \"many\";\n\u001b[7m \u001b[0m \u001b[91m             ~~~~~\u001b[0m\n\n\nFound 1 error in convex/count.ts\u001b[90m:3\u001b[0m\n\n";

/** The same file with a second error below the first. */
export const TSC_TWO_ERRORS =
  "\u001b[96mconvex/count.ts\u001b[0m:\u001b[93m3\u001b[0m:\u001b[93m14\u001b[0m - \u001b[91merror\u001b[0m\u001b[90m TS2322: \u001b[0mType 'string' is not assignable to type 'number'.\n\n\u001b[7m3\u001b[0m export const total: number = \"many\";\n\u001b[7m \u001b[0m \u001b[91m             ~~~~~\u001b[0m\n\n\u001b[96mconvex/count.ts\u001b[0m:\u001b[93m4\u001b[0m:\u001b[93m28\u001b[0m - \u001b[91merror\u001b[0m\u001b[90m TS2345: \u001b[0mArgument of type 'string' is not assignable to parameter of type 'number'.\n\n\u001b[7m4\u001b[0m export const other = count(\"x\");\n\u001b[7m \u001b[0m \u001b[91m                           ~~~\u001b[0m\n\n\nFound 2 errors in the same file, starting at: convex/count.ts\u001b[90m:3\u001b[0m\n\n";

/** `esbuild convex/msg.ts --bundle --color=true` on `export const list = () => ;`. */
export const ESBUILD_SYNTAX =
  "\u001b[31m✘ \u001b[41;31m[\u001b[41;97mERROR\u001b[41;31m]\u001b[0m \u001b[1mUnexpected \";\"\u001b[0m\n\n    convex/msg.ts:1:26:\n\u001b[37m      1 │ export const list = () => \u001b[32m;\u001b[37m\n        ╵                           \u001b[32m^\u001b[0m\n\n1 error\n";

/** `esbuild convex/imp.ts --bundle --color=false` on an import of a file that does not exist. */
export const ESBUILD_UNRESOLVED =
  "✘ [ERROR] Could not resolve \"./nope\"\n\n    convex/imp.ts:1:18:\n      1 │ import { x } from \"./nope\";\n        ╵                   ~~~~~~~~\n\n1 error\n";

/** A function's uncaught error as `convex dev --tail-logs` prints it (logs.js `formatLogLineMessage`, `CI=1`: no colour). */
export const FUNCTION_ERROR = (time: string) =>
  `${time} [CONVEX M(messages:send)] Uncaught Error: refused on purpose\n    at handler (../convex/messages.ts:12:11)\n`;

/**
 * What `npx convex dev` (convex 1.48, CI=1, stderr) printed for a type error in convex/, chunk by
 * chunk, with the milliseconds since it started: the announcement, then tsc's errors from its
 * second run (`--pretty true`), 14.6 s later on this 2-core machine at a load average of 20.
 */
export const TYPECHECK_OUTPUT: [number, string][] = [
  [13_830, "Saved EXPO_PUBLIC_CONVEX_URL and EXPO_PUBLIC_CONVEX_SITE_URL to .env.local\n▌ Developing against deployment:\n▌ └─ http://127.0.0.1:40621\n"],
  [13_884, "- Preparing Convex functions...\n\n"],
  [51_555, "✖ TypeScript typecheck via `tsc` failed.\nTo ignore failing typecheck, use `--typecheck=disable`.\n"],
  [51_583, "- Collecting TypeScript errors\n\n"],
  [
    66_161,
    "\u001b[96mconvex/count.ts\u001b[0m:\u001b[93m3\u001b[0m:\u001b[93m69\u001b[0m - \u001b[91merror\u001b[0m\u001b[90m TS2322: \u001b[0mType 'string' is not assignable to type 'number'.\n\n" +
      '\u001b[7m3\u001b[0m export const count = query({ args: {}, handler: async () => { const total: number = "many"; return total; } });\n' +
      "\u001b[7m \u001b[0m \u001b[91m                                                                    ~~~~~\u001b[0m\n\n\nFound 1 error in convex/count.ts\u001b[90m:3\u001b[0m\n",
  ],
];
