import fs from "node:fs";
import path from "node:path";
import type { File, Node } from "@babel/types";
import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { injectBackendWrapper } from "@/lib/injection";
import { parseLayout } from "./helpers";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

/** 0-based numbers of the lines whose leading whitespace belongs to a multi-line literal or comment. */
function verbatimLines(file: File, code: string): Set<number> {
  const lineOf = (offset: number) => code.slice(0, offset).split("\n").length - 1;
  const spans: Array<[number, number]> = (file.comments ?? []).map((comment) => [comment.start!, comment.end!]);
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== "object" || value === null || typeof (value as Node).type !== "string") return;
    const node = value as Node;
    if (node.type === "TemplateLiteral" || node.type === "StringLiteral") spans.push([node.start!, node.end!]);
    for (const [key, field] of Object.entries(node)) if (key !== "loc" && !key.endsWith("Comments")) visit(field);
  };
  visit(file.program);
  const lines = new Set<number>();
  for (const [start, end] of spans) for (let line = lineOf(start) + 1; line <= lineOf(end); line += 1) lines.add(line);
  return lines;
}

/**
 * How a line must reappear: byte for byte inside literals and comments; elsewhere without its
 * indentation and without what the injection adds to a line it keeps (the wrapper tags of an
 * inline wrap, the names appended to an existing convex/react import).
 */
function lineKeys(code: string, name: string): string[] {
  const verbatim = verbatimLines(parseLayout(code, name), code);
  return code.split("\n").map((line, index) => {
    if (verbatim.has(index)) return `verbatim:${line}`;
    let kept = line.trimStart().replace(/<\/?BackendWrapper>/g, "");
    if (/from ["']convex\/react["']/.test(kept)) kept = kept.replace(/(, )?\b(ConvexProvider|ConvexReactClient)\b/g, "");
    return `code:${kept}`;
  });
}

/**
 * Output lines that are wholly the injection's: the new import and the snippet (from its comment
 * to the end of `BackendWrapper`), each with the blank lines that set it apart, and the wrapper's
 * own opening and closing lines.
 */
function insertedLines(code: string): Set<number> {
  const lines = code.split("\n");
  const inserted = new Set<number>();
  const addBlock = (first: number, last: number) => {
    while (first > 0 && lines[first - 1].trim() === "") first -= 1;
    while (last + 1 < lines.length && lines[last + 1].trim() === "") last += 1;
    for (let index = first; index <= last; index += 1) inserted.add(index);
  };
  const comment = lines.findIndex((line) => line.startsWith("// Cloud backend client"));
  const wrapper = lines.findIndex((line) => line.startsWith("function BackendWrapper("));
  if (comment >= 0 && wrapper >= 0) addBlock(comment, lines.findIndex((line, index) => index > wrapper && line === "}"));
  lines.forEach((line, index) => {
    if (/^import \{ ConvexProvider, ConvexReactClient \} from ["']convex\/react["'];?$/.test(line)) addBlock(index, index);
    if (/^\s*<\/?BackendWrapper>\s*$/.test(line)) inserted.add(index);
  });
  return inserted;
}

/** Longest common subsequence of two key lists: the matched indexes of `a` and of `b`. */
function matchLines(a: string[], b: string[]): { matchedA: Set<number>; matchedB: Set<number> } {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const matchedA = new Set<number>();
  const matchedB = new Set<number>();
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) {
      matchedA.add(i++);
      matchedB.add(j++);
    } else if (table[i + 1][j] >= table[i][j + 1]) i += 1;
    else j += 1;
  }
  return { matchedA, matchedB };
}

/**
 * Input and output of every fixture the injection accepts (a refused one is written nowhere). A
 * kept provider's renamed env read is its one intended edit, undone here; the fixture tests pin it
 * byte for byte.
 */
function injectedFixtures(): Array<[string, { input: string; output: string }]> {
  return fs.readdirSync(FIXTURES).sort().flatMap((name): Array<[string, { input: string; output: string }]> => {
    const source = fs.readFileSync(path.join(FIXTURES, name), "utf8");
    try {
      const { code, note } = injectBackendWrapper(source, name);
      const was = /\(was (process\.env\.\w+)\)/.exec(note ?? "")?.[1];
      if (!was) return [[name, { input: source, output: code }]];
      // The rename also turns `process.env["X"]` into the dotted form Expo inlines.
      const dotted = (text: string) => text.replace(/process\.env\["(\w+)"\]/g, "process.env.$1");
      return [[name, { input: dotted(source), output: dotted(code.replaceAll("process.env.EXPO_PUBLIC_CONVEX_URL", was)) }]];
    } catch (error) {
      if (error instanceof AppError) return [];
      throw error;
    }
  });
}

const FIXTURE_OUTPUTS = injectedFixtures();

it("covers every injectable fixture and every kept provider", () => {
  expect(FIXTURE_OUTPUTS.length).toBeGreaterThanOrEqual(46);
});

describe.each(FIXTURE_OUTPUTS)("injection output of %s", (name, { input, output }) => {
  it("is the input plus inserted lines: other lines differ at most in indentation outside literals and comments", () => {
    const inputKeys = lineKeys(input, name);
    const outputKeys = lineKeys(output, name);
    const { matchedA, matchedB } = matchLines(inputKeys, outputKeys);
    const inserted = insertedLines(output);

    expect(inputKeys.filter((_, index) => !matchedA.has(index))).toEqual([]);
    expect(outputKeys.filter((_, index) => !matchedB.has(index) && !inserted.has(index))).toEqual([]);
  });
});
