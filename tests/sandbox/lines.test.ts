import { describe, expect, it } from "vitest";
import { createLineSplitter } from "@/lib/sandbox/lines";

function split(chunks: (string | Uint8Array)[]): string[] {
  const lines: string[] = [];
  const splitter = createLineSplitter((line) => lines.push(line));
  for (const chunk of chunks) splitter.write(chunk);
  splitter.end();
  return lines;
}

describe("line splitter", () => {
  it("joins chunks into whole lines and emits the unterminated rest at the end", () => {
    expect(split(["a", "b\nc", "d\n\ne", "f"])).toEqual(["ab\n", "cd\n", "\n", "ef"]);
  });

  it("does not split a multi-byte character cut between byte chunks", () => {
    const bytes = Buffer.from("é€\n", "utf8");
    expect(split([bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)])).toEqual(["é€\n"]);
  });

  it("emits nothing for empty output and nothing twice when ended twice", () => {
    const lines: string[] = [];
    const splitter = createLineSplitter((line) => lines.push(line));
    splitter.write("");
    splitter.end();
    splitter.end();
    expect(lines).toEqual([]);
  });

  it("passes an endless line on in pieces instead of buffering it forever", () => {
    const lines = split(["x".repeat(70 * 1024), "y\n"]);
    expect(lines.length).toBe(2);
    expect(lines.join("")).toBe(`${"x".repeat(70 * 1024)}y\n`);
  });
});
