import type { File } from "@babel/types";
import { walk } from "./ast";
import { parseWithBabel, type Language } from "./syntax";

/** A text range whose bytes are a value or a comment: re-indenting it would change it. */
export interface VerbatimRange {
  start: number;
  end: number;
}

/**
 * The multi-line template literals, string literals (JSX attributes, `\` continuations) and
 * comments of a parsed file, outermost only, in source order. Single-line ones cannot be
 * re-indented from the inside, so they are left out.
 */
export function multiLineVerbatimRanges(file: File, code: string): VerbatimRange[] {
  const ranges: VerbatimRange[] = [];
  walk(file.program, (node) => {
    // JSX text is left out: it is markup, and React drops its indentation.
    if (node.type !== "TemplateLiteral" && node.type !== "StringLiteral") return;
    if (code.slice(node.start!, node.end!).includes("\n")) ranges.push({ start: node.start!, end: node.end! });
    return false;
  });
  for (const comment of file.comments ?? []) {
    if (code.slice(comment.start!, comment.end!).includes("\n")) ranges.push({ start: comment.start!, end: comment.end! });
  }
  return ranges
    .sort((a, b) => a.start - b.start)
    .filter((range, index, sorted) => !sorted.slice(0, index).some((outer) => outer.end >= range.end));
}

const withoutIndentation = (text: string) => text.replace(/\n[ \t]*/g, "\n");

/**
 * recast re-indents every line of a subtree it moves deeper, the insides of literals and comments
 * included, which changes their values. Puts the original bytes of each multi-line literal and
 * comment back. The printed file holds the same ones in the same order (the injection adds none),
 * differing at most in indentation; anything else is a bug, reported by returning null.
 */
export function restoreVerbatimRanges(original: string, printed: string, language: Language): string | null {
  const before = multiLineVerbatimRanges(parseWithBabel(original, language), original);
  const after = multiLineVerbatimRanges(parseWithBabel(printed, language), printed);
  if (before.length !== after.length) return null;
  let code = printed;
  // From the end, so earlier offsets stay valid.
  for (let index = after.length - 1; index >= 0; index -= 1) {
    const originalText = original.slice(before[index].start, before[index].end);
    const printedText = printed.slice(after[index].start, after[index].end);
    if (withoutIndentation(originalText) !== withoutIndentation(printedText)) return null;
    code = code.slice(0, after[index].start) + originalText + code.slice(after[index].end);
  }
  return code;
}
