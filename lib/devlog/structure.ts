import { createHash } from "node:crypto";
import type { ErrorDetails, ErrorKind, ErrorNotificationSource } from "@/lib/realtime";
import { APP_DIR } from "@/lib/sandbox/port";

/**
 * The fields an error group's text yields; the ones not found are absent. The fingerprint covers
 * source, kind, file and message without positions, times and durations: an edit above the
 * error moves it but does not make it another error.
 */
export type ErrorStructure = Omit<ErrorDetails, "kind" | "fingerprint" | "firstSeenAt" | "resolvedAt" | "resolves"> & {
  kind: ErrorKind;
  fingerprint: string;
};

/** Code frames longer than this are cut (the message keeps them whole). */
const MAX_CODE_FRAME_CHARS = 1200;
const MAX_CODE_FRAME_LINES = 12;

const TSC_HEADER = /^(\S[^:\n]*?):(\d+):(\d+) - error TS\d+:/m;
/** esbuild's location line under `✘ [ERROR] …`: `    convex/messages.ts:3:73:`. */
const ESBUILD_LOCATION = /^[ \t]+(\S[^:\n]*?):(\d+):(\d+):[ \t]*$/m;
/** Metro: `Unable to resolve module ./x from /home/user/app/app/index.tsx: …`. */
const METRO_RESOLVE = /Unable to resolve module .+? from (\S+?):?(?:\s|$)/;
/** Babel through Metro: `SyntaxError: /home/user/app/app/index.tsx: Unexpected token (3:4)`. */
const BABEL_SYNTAX = /^\S*Error: (\/\S+?|[\w./-]+\.[cm]?[jt]sx?): .*\((\d+):(\d+)\)/m;
/** A stack frame or any `path:line:col` naming a source file. */
const FILE_POSITION = /(?:^|[\s(])((?:\.\.?\/|\/)?[\w@.-]+(?:\/[\w@.[\]()-]+)*\.[cm]?[jt]sx?):(\d+)(?::(\d+))?/gm;
/** The CLI's tailed function log: `5/21/2025, 1:06:12 PM [CONVEX M(messages:send)] …`. */
const FUNCTION_LOG = /\[CONVEX [A-Z]+\(([^)\s]+)\)\]/;
/** Metro's code frame marks the error line: `> 2 | import Button from "./Button";`. */
const METRO_FRAME_MARK = /^[ \t]*>[ \t]*(\d+) \|/m;

const TYPECHECK = /\berror TS\d+:|typecheck via `tsc` failed/;
const BUNDLE = /\u2718 \[ERROR\]|\besbuild failed\b|Build failed with \d+ error/;
const SCHEMA = /\bSchema validation failed\b|does not match the schema|\bschema\.(?:ts|js)\b.*\berror|\bInvalidSchema\b|\bSchemaEnforcementError\b/i;
const METRO_BUNDLE = /Unable to resolve module|\bbundling failed\b|\bBundling failed\b|^\S*SyntaxError: \S+: /m;

function kindOf(message: string, origin: ErrorNotificationSource): ErrorKind {
  if (origin === "app-dev") return METRO_BUNDLE.test(message) || TYPECHECK.test(message) ? "app-bundle" : "app-runtime";
  if (FUNCTION_LOG.test(message)) return "function-runtime";
  if (TYPECHECK.test(message)) return "typecheck";
  if (BUNDLE.test(message)) return "bundle";
  if (SCHEMA.test(message)) return "schema";
  return "push";
}

/**
 * A path as the app knows it, relative to its folder; null for files outside it (dependencies,
 * the CLI's own code, bundler output), which the builder cannot fix.
 */
export function appRelativePath(path: string): string | null {
  let relative = path.startsWith(`${APP_DIR}/`) ? path.slice(APP_DIR.length + 1) : path;
  // Stack frames of pushed functions name their sources as `../convex/x.ts` from the bundle's folder.
  relative = relative.replace(/^(?:\.\.?\/)+/, "");
  if (relative.startsWith("/") || relative.split("/").some((part) => part === "node_modules" || part === "_deps" || part === "")) return null;
  return relative;
}

interface Location {
  file: string;
  line: number;
  column?: number;
  /** Where in the message the location was found, so its code frame is looked for after it. */
  index: number;
}

/** `columnBase` 0: the tool counts columns from 0 (esbuild, Babel); reported columns count from 1. */
function located(path: string, line: string, column: string | undefined, index: number, columnBase = 1): Location | null {
  const file = appRelativePath(path);
  const counted = column === undefined ? 0 : Number(column) + 1 - columnBase;
  // A column 0 in a stack frame means "unknown" (the CLI's analysis errors print `:3:0`).
  return file === null ? null : { file, line: Number(line), column: counted > 0 ? counted : undefined, index };
}

const PRECISE_LOCATIONS: { pattern: RegExp; columnBase: number }[] = [
  { pattern: TSC_HEADER, columnBase: 1 },
  { pattern: ESBUILD_LOCATION, columnBase: 0 },
  { pattern: BABEL_SYNTAX, columnBase: 0 },
];

/** The first position in the message that names one of the app's files, most precise form first. */
function locationOf(message: string): Location | null {
  for (const { pattern, columnBase } of PRECISE_LOCATIONS) {
    const match = pattern.exec(message);
    const found = match && located(match[1], match[2], match[3], match.index, columnBase);
    if (found) return found;
  }
  const metro = METRO_RESOLVE.exec(message);
  if (metro) {
    const file = appRelativePath(metro[1]);
    const mark = METRO_FRAME_MARK.exec(message);
    if (file) return { file, line: mark ? Number(mark[1]) : 0, index: metro.index };
  }
  for (const match of message.matchAll(FILE_POSITION)) {
    const found = located(match[1], match[2], match[3], match.index ?? 0);
    if (found) return found;
  }
  return null;
}

/** Lines of a code frame: tsc's `3 source` and `  ~~~`, esbuild's `3 │ source` and `╵ ^`, Metro's `> 3 | source` and `| ^`. */
const FRAME_LINE = /^(?:\d+ |[ \t]+[~^]|[ \t]*>?[ \t]*\d* ?[|│╵])/;
const isFrameLine = (line: string) => FRAME_LINE.test(line) && !/^\d+ errors?\b/.test(line);

/** The first run of code-frame lines after `from` in the message, cut to a few lines. */
function codeFrameAfter(message: string, from: number): string | undefined {
  const lines = message.slice(from).split("\n").slice(1);
  const start = lines.findIndex(isFrameLine);
  if (start === -1) return undefined;
  const frame: string[] = [];
  for (const line of lines.slice(start)) {
    if (!isFrameLine(line) || frame.length === MAX_CODE_FRAME_LINES) break;
    frame.push(line);
  }
  const text = frame.join("\n").trimEnd();
  return text.length > MAX_CODE_FRAME_CHARS ? text.slice(0, MAX_CODE_FRAME_CHARS) : text;
}

/**
 * The message as it reads on every repeat: code frames and stack frames (positions move with
 * edits), log timestamps, positions, durations and the CLI's retry counts removed.
 */
function normalized(message: string): string {
  return message
    .split("\n")
    .filter((line) => line.trim() !== "" && !isFrameLine(line) && !/^[ \t]+at /.test(line))
    .map((line) =>
      line
        .replace(/^\d{1,2}\/\d{1,2}\/\d{4}, \d{1,2}:\d{2}:\d{2}(?: [AP]M)? /, "")
        .replace(/:\d+(?::\d+)?\b/g, "")
        .replace(/\(\d+(?:\.\d+)?m?s\)|\b\d+(?:\.\d+)?m?s\b/g, "")
        .replace(/\b\d{1,2}:\d{2}:\d{2}\b/g, "")
        .trim(),
    )
    .join("\n");
}

/** Reads kind, location, code frame and function out of an error group's ANSI-free text. */
export function structureError(message: string, origin: ErrorNotificationSource): ErrorStructure {
  const kind = kindOf(message, origin);
  const location = locationOf(message);
  const functionName = FUNCTION_LOG.exec(message)?.[1];
  const fingerprint = createHash("sha256")
    .update(`${origin}\n${kind}\n${location?.file ?? ""}\n${normalized(message)}`)
    .digest("hex")
    .slice(0, 24);
  const structure: ErrorStructure = { kind, fingerprint };
  if (location) {
    structure.file = location.file;
    if (location.line > 0) structure.line = location.line;
    if (location.column !== undefined) structure.column = location.column;
    const codeFrame = codeFrameAfter(message, location.index);
    if (codeFrame) structure.codeFrame = codeFrame;
  }
  if (functionName) structure.functionName = functionName;
  return structure;
}
