import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogScanner, type LogScannerOptions } from "@/lib/devlog/scanner";
import { TYPECHECK_OUTPUT } from "./recordings";

function collect(options: Partial<LogScannerOptions> = {}) {
  const messages: string[] = [];
  const scanner = createLogScanner({ onError: (message) => messages.push(message), ...options });
  return { scanner, messages };
}

/** Feeds `chunks` in order and flushes; groups only by contiguity since no timer fires. */
function scanChunks(chunks: string[]): string[] {
  const { scanner, messages } = collect();
  for (const chunk of chunks) scanner.write(chunk);
  scanner.flush();
  return messages;
}

const ESBUILD_OUTPUT = [
  "- Preparing Convex functions...",
  '\u001b[31m✘ [ERROR]\u001b[0m Unexpected ";"',
  "",
  "    convex/messages.ts:3:73:",
  "      3 │ export const list = query({ handler: async () => ; });",
  "        ╵                                                  ^",
  "",
  "\u001b[31m✖\u001b[39m esbuild failed: Error: Build failed with 1 error:",
  "Authenticate with `npx convex dev`",
  "    this indented line no longer belongs to the error",
  "✔ 13:28:03 Convex functions ready! (8.35s)",
  "",
].join("\n");

const ESBUILD_GROUP = [
  '✘ [ERROR] Unexpected ";"',
  "",
  "    convex/messages.ts:3:73:",
  "      3 │ export const list = query({ handler: async () => ; });",
  "        ╵                                                  ^",
  "",
  "✖ esbuild failed: Error: Build failed with 1 error:",
].join("\n");

/** Feeds `chunks` and flushes; records error groups and resolutions in the order they were reported. */
function scanEvents(chunks: string[]): string[] {
  const events: string[] = [];
  const scanner = createLogScanner({ onError: (message) => events.push(`error: ${message}`), onResolved: (line) => events.push(`resolved: ${line}`) });
  for (const chunk of chunks) scanner.write(chunk);
  scanner.flush();
  return events;
}

describe("createLogScanner: resolved", () => {
  const READY = "✔ 13:28:03 Convex functions ready! (8.35s)";

  it("reports the success line after errors, once, after the pending group, for every split of the input", () => {
    const text = `✖ TypeError: fetch failed\n    at push (cli.js:1:1)\n- Preparing Convex functions...\n${READY}\n✔ 13:29:00 Convex functions ready! (1.1s)\n`;
    for (let cut = 0; cut <= text.length; cut += 1) {
      expect(scanEvents([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual([
        "error: ✖ TypeError: fetch failed\n    at push (cli.js:1:1)",
        `resolved: ${READY}`,
      ]);
    }
  });

  it("reports nothing for success lines without errors before them", () => {
    expect(scanEvents([`${READY}\n`, "✔ No indexes are deleted by this push\n"])).toEqual([]);
  });

  it("resolves each run of errors separately, with plain and coloured success lines", () => {
    const readyAgain = "✔ 13:29:10 Convex functions ready! (2.3s)";
    const chunks = [
      "convex/messages.ts:3:92 - error TS2322: Type 'number' is not assignable to type 'string'.\n",
      "- Preparing Convex functions...\n",
      `${readyAgain}\n`,
      "✖ Error: Unable to start push\n",
      `\u001b[32m${READY.slice(0, 1)}\u001b[39m${READY.slice(1)}\n`,
    ];
    expect(scanEvents(chunks)).toEqual([
      "error: convex/messages.ts:3:92 - error TS2322: Type 'number' is not assignable to type 'string'.",
      `resolved: ${readyAgain}`,
      "error: ✖ Error: Unable to start push",
      `resolved: ${READY}`,
    ]);
  });

  it("does not resolve with a success line that comes before the errors in the same chunk", () => {
    expect(scanEvents([`${READY}\n✖ TypeError: fetch failed\n`])).toEqual(["error: ✖ TypeError: fetch failed"]);
  });
});

describe("createLogScanner: streaming input", () => {
  it("groups an error with its continuation lines and strips colours", () => {
    expect(scanChunks([ESBUILD_OUTPUT])).toEqual([ESBUILD_GROUP]);
  });

  it("gives the same result for every split of the input into two chunks", () => {
    for (let cut = 0; cut <= ESBUILD_OUTPUT.length; cut += 1) {
      expect(scanChunks([ESBUILD_OUTPUT.slice(0, cut), ESBUILD_OUTPUT.slice(cut)]), `cut at ${cut}`).toEqual([ESBUILD_GROUP]);
    }
  });

  it("gives the same result when fed one character at a time (escapes and surrogates split)", () => {
    const text = `${ESBUILD_OUTPUT}\u001b[31m✖\u001b[39m Error: emoji 😀 in a message\n`;
    // The success line between them ends the first group: the second error is a new one.
    expect(scanChunks([...text.split("")])).toEqual([ESBUILD_GROUP, "✖ Error: emoji 😀 in a message"]);
  });

  it("decides success per line: a chunk with a success mark still reports its error lines", () => {
    const chunk = "✔ 13:28:03 Convex functions ready! (8.35s)\n✖ TypeError: fetch failed\n✔ Provisioned a dev deployment\n";
    expect(scanChunks([chunk])).toEqual(["✖ TypeError: fetch failed"]);
  });

  it("handles CRLF, lone CR redraws, and a CRLF split across chunks", () => {
    expect(scanChunks(["Error: first\r", "\nplain\r\n✖ second\rprogress 50%\r"])).toEqual(["Error: first\n✖ second"]);
  });

  it("cleans many coloured lines in one chunk the same way as a few", () => {
    const lines = Array.from({ length: 200 }, (_, index) =>
      index % 2 === 0 ? `\u001b[32minfo ${index}\u001b[39m` : `\u001b[31m✖\u001b[39m failure ${index}`,
    );
    const expected = lines.filter((_, index) => index % 2 === 1).map((line) => line.replace(/\u001b\[\d+m/g, ""));
    const { scanner, messages } = collect({ maxGroupChars: 10 });
    scanner.write(`${lines.join("\n")}\n`);
    scanner.flush();
    expect(messages).toEqual(expected);
    expect(scanner.stats).toEqual({ errorLines: 100, groups: 100, resolved: 0 });
  });

  it("scans a partial line on flush and ignores writes after close", () => {
    const { scanner, messages } = collect();
    scanner.write("Cannot find module 'x'");
    expect(messages).toEqual([]);
    scanner.close();
    scanner.write("Error: after close\n");
    scanner.flush();
    expect(messages).toEqual(["Cannot find module 'x'"]);
  });

  it("scans a line that never ends once it passes maxLineChars", () => {
    const { scanner, messages } = collect({ maxLineChars: 100 });
    scanner.write("Error: ");
    scanner.write("x".repeat(120));
    scanner.write("y".repeat(50));
    expect(messages).toEqual([]);
    scanner.flush();
    expect(messages).toEqual([`Error: ${"x".repeat(120)}`]);
  });
});

describe("createLogScanner: multi-line grouping in time", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends a group 500 ms after its last line, not earlier", () => {
    const { scanner, messages } = collect();
    scanner.write("Failed to analyze messages.js: Uncaught ReferenceError: foo is not defined\n");
    vi.advanceTimersByTime(300);
    scanner.write("    at <anonymous> (../convex/messages.ts:3:0)\n");
    vi.advanceTimersByTime(499);
    expect(messages).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(messages).toEqual([
      "Failed to analyze messages.js: Uncaught ReferenceError: foo is not defined\n    at <anonymous> (../convex/messages.ts:3:0)",
    ]);
  });

  it("joins errors that follow within the delay and starts a new group after a quiet period", () => {
    const { scanner, messages } = collect();
    scanner.write("✖ Error: Unable to push deployment config to https://happy-animal-123.convex.cloud\n");
    vi.advanceTimersByTime(200);
    scanner.write("Retrying request (attempt 3/6)...\n    not a continuation: a plain line came between\n");
    scanner.write("✖ Error: Unable to pull deployment config from https://happy-animal-123.convex.cloud\n");
    vi.advanceTimersByTime(500);
    scanner.write("✖ TypeError: fetch failed\n");
    vi.advanceTimersByTime(500);
    expect(messages).toEqual([
      "✖ Error: Unable to push deployment config to https://happy-animal-123.convex.cloud\n✖ Error: Unable to pull deployment config from https://happy-animal-123.convex.cloud",
      "✖ TypeError: fetch failed",
    ]);
  });

  it("honours a configured delay", () => {
    const { scanner, messages } = collect({ groupDelayMs: 50 });
    scanner.write("Error: quick\n");
    vi.advanceTimersByTime(49);
    expect(messages).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(messages).toEqual(["Error: quick"]);
  });

  it("sends a group at once when it outgrows maxGroupChars", () => {
    const { scanner, messages } = collect({ maxGroupChars: 64 });
    scanner.write(`Error: big\n${"    at frame\n".repeat(10)}`);
    expect(messages).toHaveLength(1);
    expect(messages[0].length).toBeGreaterThanOrEqual(60);
    vi.advanceTimersByTime(500);
    expect(messages).toHaveLength(1);
  });
});

/** tsc's error with its code frame (the source line starts with its number, not indented). */
const TYPE_ERROR = [
  "convex/count.ts:3:69 - error TS2322: Type 'string' is not assignable to type 'number'.",
  "",
  '3 export const count = query({ args: {}, handler: async () => { const total: number = "many"; return total; } });',
  `${" ".repeat(70)}~~~~~`,
].join("\n");

describe("createLogScanner: the CLI's failed typecheck", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Plays the recorded output at its pace (scaled by `slower`), then `after` ms more. */
  function play(scanner: ReturnType<typeof collect>["scanner"], slower = 1, after = 0): void {
    let now = 0;
    for (const [at, chunk] of TYPECHECK_OUTPUT) {
      vi.advanceTimersByTime(at * slower - now);
      now = at * slower;
      scanner.write(chunk);
    }
    vi.advanceTimersByTime(after);
  }

  it("is one message, with tsc's file:line, message and code frame, however long tsc's second run takes", () => {
    for (const slower of [0.2, 1, 3]) {
      const { scanner, messages } = collect();
      play(scanner, slower, 1_000);
      expect(messages, `${slower} × the recorded pace`).toEqual([`✖ TypeScript typecheck via \`tsc\` failed.\n${TYPE_ERROR}\n`.trimEnd()]);
      expect(scanner.stats.groups).toBe(1);
    }
  });

  it("sends the announcement alone when no details follow within detailWaitMs, and at once on flush", () => {
    const { scanner, messages } = collect({ detailWaitMs: 10_000 });
    scanner.write(TYPECHECK_OUTPUT[2][1]);
    vi.advanceTimersByTime(10_499);
    expect(messages).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(messages).toEqual(["✖ TypeScript typecheck via `tsc` failed."]);

    const flushed = collect();
    flushed.scanner.write(TYPECHECK_OUTPUT[2][1]);
    flushed.scanner.flush();
    expect(flushed.messages).toEqual(["✖ TypeScript typecheck via `tsc` failed."]);
  });

  it("sends a waiting announcement before the success line that resolves it", () => {
    const events: string[] = [];
    const scanner = createLogScanner({ onError: (message) => events.push(`error: ${message}`), onResolved: (line) => events.push(`resolved: ${line}`) });
    scanner.write(TYPECHECK_OUTPUT[2][1]);
    vi.advanceTimersByTime(1_000);
    scanner.write("✔ 13:28:03 Convex functions ready! (8.35s)\n");
    expect(events).toEqual(["error: ✖ TypeScript typecheck via `tsc` failed.", "resolved: ✔ 13:28:03 Convex functions ready! (8.35s)"]);
  });
});
