import { describe, expect, it } from "vitest";
import { stripAnsi } from "@/lib/log/ansi";
import { createLogScanner } from "@/lib/devlog/scanner";
import { ERROR_LINES, PLAIN_LINES } from "./lines";

/** Scans one line on its own and returns what the scanner reports. */
function scanOne(line: string): string[] {
  const reported: string[] = [];
  const scanner = createLogScanner({ onError: (message) => reported.push(message) });
  scanner.write(`${line}\n`);
  scanner.flush();
  return reported;
}

describe("error patterns on realistic lines", () => {
  it("uses more than 40 lines", () => {
    expect(ERROR_LINES.length + PLAIN_LINES.length).toBeGreaterThan(40);
  });

  it.each(ERROR_LINES)("reports $why: $line", ({ line }) => {
    expect(scanOne(line)).toEqual([stripAnsi(line).trimEnd()]);
  });

  it.each(PLAIN_LINES)("ignores $why: $line", ({ line }) => {
    expect(scanOne(line)).toEqual([]);
  });

  it("keeps the case rules: `error TS` is case-sensitive, `is not defined` is not", () => {
    expect(scanOne("src/a.ts:1:1 - ERROR ts1005: ';' expected.")).toEqual([]);
    expect(scanOne("ReferenceError: x IS NOT DEFINED")).toHaveLength(1);
  });
});

describe("stripAnsi", () => {
  it.each([
    ["colours", "\u001b[31m✖\u001b[39m Error", "✖ Error"],
    ["bold and reset", "\u001b[1m\u001b[22mok\u001b[0m", "ok"],
    ["cursor movement", "\u001b[2K\u001b[1Gdone", "done"],
    ["OSC hyperlink", "\u001b]8;;https://example.com\u0007link\u001b]8;;\u0007", "link"],
    ["OSC with ST", "\u001b]0;title\u001b\\text", "text"],
    ["private mode", "\u001b[?25lhidden cursor\u001b[?25h", "hidden cursor"],
  ])("removes %s", (_name, input, expected) => {
    expect(stripAnsi(input)).toBe(expected);
  });

  it("returns escape-free text unchanged", () => {
    const text = "plain ✔ text";
    expect(stripAnsi(text)).toBe(text);
  });
});
