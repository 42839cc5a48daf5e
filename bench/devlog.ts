/**
 * Dev-server log scanner throughput against `grep -E -c` with the same patterns on the same file.
 * Run: npx tsx bench/devlog.ts [sizeMB=200]
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ERROR_PATTERN_SOURCE, createLogScanner } from "@/lib/devlog";

const SIZE_MB = Number(process.argv[2] ?? 200);
const CHUNK_BYTES = 64 * 1024;
const ROUNDS = 3;

const PLAIN = [
  "- Preparing Convex functions...",
  "5/21/2025, 1:06:13 PM [CONVEX Q(messages:list)] [LOG] 'fetched 20 messages for channel general'",
  "5/21/2025, 1:06:14 PM [CONVEX M(messages:send)] [LOG] 'inserted message', { author: 'alice', length: 42 }",
  "5/21/2025, 1:06:15 PM [CONVEX M(errors:clear)] [LOG] 'cleared 3 rows'",
  "✔ 13:28:03 Convex functions ready! (8.35s)",
  "Retrying request (attempt 3/6)...",
  "Failed due to network error, retrying in 552.54ms...",
  "iOS Bundled 1534ms node_modules/expo-router/entry.js (1023 modules)",
  "Found 0 errors. Watching for file changes.",
  "errorHandler.ts compiled in 12ms",
];
const ERRORS = [
  ["\u001b[31m✖\u001b[39m Error: Unable to start push to https://happy-animal-123.convex.cloud"],
  ["Failed to analyze messages.js: Uncaught ReferenceError: foo is not defined", "    at <anonymous> (../convex/messages.ts:3:0)"],
  ['✘ [ERROR] Could not resolve "@convex/helpers/getEnv"', "", "    convex/lib.ts:1:20:"],
  ["convex/messages.ts:3:92 - error TS2322: Type 'number' is not assignable to type 'string'."],
  ["5/21/2025, 1:07:40 PM [CONVEX M(messages:send)] Uncaught ArgumentValidationError in messages:send"],
];

/** Writes a deterministic log of about `sizeMB` MB; about 1 line in 100 starts an error. */
function generateLog(file: string, sizeMB: number): { bytes: number; lines: number } {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const fd = fs.openSync(file, "w");
  let bytes = 0;
  let lines = 0;
  while (bytes < sizeMB * 1e6) {
    const batch: string[] = [];
    for (let i = 0; i < 10_000; i += 1) {
      const entry = random() < 0.01 ? ERRORS[Math.floor(random() * ERRORS.length)] : [PLAIN[Math.floor(random() * PLAIN.length)]];
      batch.push(...entry);
    }
    const text = `${batch.join("\n")}\n`;
    bytes += fs.writeSync(fd, text);
    lines += batch.length;
  }
  fs.closeSync(fd);
  return { bytes, lines };
}

/** One pass: read, decode and scan; the scanner's own time is measured around write() alone. */
function scanFile(file: string) {
  const scanner = createLogScanner({ onError: () => {} });
  const decoder = new TextDecoder();
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const fd = fs.openSync(file, "r");
  let scanMs = 0;
  const started = performance.now();
  for (let read = fs.readSync(fd, buffer); read > 0; read = fs.readSync(fd, buffer)) {
    const text = decoder.decode(buffer.subarray(0, read), { stream: true });
    const before = performance.now();
    scanner.write(text);
    scanMs += performance.now() - before;
  }
  const before = performance.now();
  scanner.flush();
  scanMs += performance.now() - before;
  fs.closeSync(fd);
  return { scanMs, totalMs: performance.now() - started, errorLines: scanner.stats.errorLines };
}

function grepFile(file: string) {
  const started = performance.now();
  // C locale: grep's fastest mode; the patterns are plain bytes (UTF-8 marks included).
  const result = spawnSync("grep", ["-E", "-c", ERROR_PATTERN_SOURCE, file], { env: { ...process.env, LC_ALL: "C" }, encoding: "utf8" });
  const ms = performance.now() - started;
  if (result.status !== 0 && result.status !== 1) throw new Error(`grep failed: ${result.stderr}`);
  return { ms, count: Number(result.stdout.trim()) };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "devlog-bench-"));
  const file = path.join(dir, "dev.log");
  try {
    const { bytes, lines } = generateLog(file, SIZE_MB);
    const mb = bytes / 1e6;
    console.log(`log: ${mb.toFixed(1)} MB, ${lines.toLocaleString("en")} lines, ${CHUNK_BYTES / 1024} KiB chunks, best of ${ROUNDS}`);

    const scans = [];
    const greps = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      scans.push(scanFile(file));
      greps.push(grepFile(file));
    }
    const scan = scans.reduce((best, run) => (run.scanMs < best.scanMs ? run : best));
    const endToEnd = Math.min(...scans.map((run) => run.totalMs));
    const grep = greps.reduce((best, run) => (run.ms < best.ms ? run : best));

    const row = (label: string, ms: number) =>
      `${label.padEnd(34)} ${(ms / 1000).toFixed(3)} s  ${(mb / (ms / 1000)).toFixed(0).padStart(5)} MB/s  ${(lines / (ms / 1000) / 1e6).toFixed(2)} M lines/s`;
    console.log(row("scanner (write() only)", scan.scanMs));
    console.log(row("scanner + read + UTF-8 decode", endToEnd));
    console.log(row("grep -E -c (LC_ALL=C)", grep.ms));
    console.log(`ratio scanner/grep: ${(scan.scanMs / grep.ms).toFixed(2)}x (write() only), ${(endToEnd / grep.ms).toFixed(2)}x (with read + decode); goal <= 3x`);
    console.log(`error lines: scanner ${scan.errorLines}, grep ${grep.count}${scan.errorLines === grep.count ? " (equal)" : " (DIFFERENT)"}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
