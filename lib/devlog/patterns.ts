/** `[eE][rR]…`: one pattern can mix case-insensitive and case-sensitive parts (Node 20 has no `(?i:)`). */
function anyCase(literal: string): string {
  return literal.replace(/[a-z]/gi, (letter) => `[${letter.toLowerCase()}${letter.toUpperCase()}]`);
}

/** One alternative of the error matcher; `source` is valid both as a JS regex and as POSIX ERE. */
export interface ErrorPattern {
  source: string;
  /** `spec` = spec 7.2; `addition` = an error form spec 7.2 misses. */
  origin: "spec" | "addition";
  note: string;
}

/**
 * Error-line patterns. Spec 7.2 also lists `Error:`, `TypeError:` and `SyntaxError:` as
 * case-sensitive; every line they match also matches the case-insensitive `error:`, so they add
 * nothing to the union and are not repeated.
 */
export const ERROR_PATTERNS: readonly ErrorPattern[] = [
  { source: anyCase("error:"), origin: "spec", note: "error: (any case; covers Error:, TypeError:, SyntaxError:)" },
  { source: anyCase("failed to"), origin: "spec", note: "failed to (any case)" },
  { source: anyCase("unable to"), origin: "spec", note: "Unable to (any case)" },
  { source: anyCase("cannot find"), origin: "spec", note: "Cannot find (any case)" },
  { source: anyCase("is not defined"), origin: "spec", note: "is not defined (any case)" },
  { source: anyCase("validationerror"), origin: "spec", note: "ValidationError (any case)" },
  { source: "\u2716", origin: "spec", note: "✖ U+2716, the backend CLI's failure mark" },
  { source: "\u2718 \\[ERROR\\]", origin: "addition", note: "esbuild's `✘ [ERROR]` (no colon, so spec 7.2 misses it)" },
  { source: "error TS[0-9]+:", origin: "addition", note: "TypeScript's `error TS2322:` (no colon after `error`)" },
];

/** The union of all patterns, usable as-is with `grep -E` (the benchmark compares the two). */
export const ERROR_PATTERN_SOURCE = ERROR_PATTERNS.map((pattern) => pattern.source).join("|");

/**
 * The one compiled matcher. Global so a scanner can run it across a whole chunk of lines
 * (no pattern spans a line break) instead of once per line.
 */
export function createErrorMatcher(): RegExp {
  return new RegExp(ERROR_PATTERN_SOURCE, "g");
}

/** Success marks of the CLI: ✔ U+2714, and √ U+221A where the terminal lacks Unicode. */
const SUCCESS_LINE = /^[ \t]*[\u2714\u221a]/;

/** A line the CLI prints on success (e.g. `✔ 13:28:03 Convex functions ready!`); never an error. */
export function isSuccessLine(line: string): boolean {
  return SUCCESS_LINE.test(line);
}

/** Finds whole success lines in text of complete lines (global and multiline, for `exec` from an index). */
export function createSuccessMatcher(): RegExp {
  return new RegExp(`${SUCCESS_LINE.source}.*`, "gm");
}
