import { stripAnsi } from "@/lib/log/ansi";
import { createErrorMatcher, createSuccessMatcher, isSuccessLine } from "./patterns";

/** Spec 8: errors are buffered for 500 ms after their last line before they are sent. */
export const DEFAULT_GROUP_DELAY_MS = 500;

/**
 * How long a group ending in the CLI's "typecheck via `tsc` failed." waits for tsc's own errors.
 * The CLI prints that line, then runs tsc a second time for the errors with file and position,
 * which arrive seconds later (3–4 s on an idle 2-core machine, 15 s with a load average of 20).
 */
export const DEFAULT_DETAIL_WAIT_MS = 60_000;

/** The `convex` CLI's announcement that tsc's errors follow (lib/cli/lib/typecheck.js in the package). */
const ANNOUNCES_DETAILS = /typecheck via `tsc` failed\.$/;

export interface LogScannerOptions {
  /** Receives each error group once: its lines, ANSI-free, joined with `\n`. */
  onError: (message: string) => void;
  /**
   * Receives the dev server's success line (a compile or push that went through) when errors
   * were reported since the last one, after the pending error group is sent.
   */
  onResolved?: (line: string) => void;
  /**
   * Whether errors may be unresolved before the first line: then the first success line goes to
   * `onResolved` even without errors before it (a restarted dev server's first success resolves
   * the errors its earlier run left).
   * @default false
   */
  unresolvedAtStart?: boolean;
  /**
   * Quiet time after the last line of an error group before the group is sent.
   * @default 500
   */
  groupDelayMs?: number;
  /**
   * How long a group that announces details to come (the CLI's failed typecheck) waits for the
   * next group, which is then sent with it as one; without one it is sent alone.
   * @default 60000
   */
  detailWaitMs?: number;
  /**
   * A group that grows past this many characters is sent at once; whoever publishes it
   * truncates it further (the realtime payload limit is far smaller).
   * @default 262144
   */
  maxGroupChars?: number;
  /**
   * A line still unterminated after this many characters is scanned as if it had ended, so
   * output without line breaks cannot grow the carry-over buffer without bound.
   * @default 65536
   */
  maxLineChars?: number;
}

export interface LogScannerStats {
  /** Lines that matched an error pattern (continuation lines are not counted). */
  errorLines: number;
  /** Messages handed to `onError` (an announcement and the details after it are one). */
  groups: number;
  /** Success lines handed to `onResolved`. */
  resolved: number;
}

export interface LogScanner {
  /** Feeds raw output; a chunk may end in the middle of a line or of an escape sequence. */
  write(chunk: string): void;
  /** Treats buffered partial output as a finished line and sends the open group (and a waiting announcement) now. */
  flush(): void;
  /** Flushes, then ignores further writes. */
  close(): void;
  readonly stats: Readonly<LogScannerStats>;
}

/**
 * Lines that continue the error above them: blank, indented (stack frames, code frames), or a
 * source line of tsc's code frame (`3 export const x: number = "a";`, the line number first).
 */
const TSC_FRAME_LINE = /^[0-9]+ /;
const isContinuation = (line: string) => line === "" || line[0] === " " || line[0] === "\t" || TSC_FRAME_LINE.test(line);

/** Lines with escapes are cleaned one by one; past this many in one batch, the rest at once. */
const ESCAPED_LINES_ONE_BY_ONE = 64;

/**
 * A streaming scanner for dev-server output. The compiled matcher runs over each batch of complete
 * lines at once; only lines it hits, and the continuation lines right after them, are looked at
 * one by one. Error lines that follow each other within `groupDelayMs` form one group.
 */
export function createLogScanner(options: LogScannerOptions): LogScanner {
  const groupDelayMs = options.groupDelayMs ?? DEFAULT_GROUP_DELAY_MS;
  const detailWaitMs = options.detailWaitMs ?? DEFAULT_DETAIL_WAIT_MS;
  const maxGroupChars = options.maxGroupChars ?? 256 * 1024;
  const maxLineChars = options.maxLineChars ?? 64 * 1024;
  const matcher = createErrorMatcher();
  const successMatcher = createSuccessMatcher();
  const stats: LogScannerStats = { errorLines: 0, groups: 0, resolved: 0 };

  let carry = "";
  let group: string[] = [];
  let groupChars = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // True while the previous complete line belonged to an error, so indented lines may follow it.
  let inRun = false;
  let pendingCarriageReturn = false;
  let closed = false;
  // True from an error line until the next success line: only then is a success a resolution.
  let unresolved = options.unresolvedAtStart ?? false;
  // A group announcing details to come, waiting for them.
  let announcement: string | null = null;
  let announcementTimer: ReturnType<typeof setTimeout> | undefined;

  function emit(message: string): void {
    stats.groups += 1;
    options.onError(message);
  }

  /** Sends the waiting announcement alone (its details never came). */
  function sendAnnouncement(): void {
    if (announcementTimer !== undefined) clearTimeout(announcementTimer);
    announcementTimer = undefined;
    if (announcement === null) return;
    const message = announcement;
    announcement = null;
    emit(message);
  }

  function sendGroup(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (group.length === 0) return;
    let message = group.join("\n").trimEnd();
    group = [];
    groupChars = 0;
    if (announcement !== null) {
      message = `${announcement}\n${message}`;
      announcement = null;
      clearTimeout(announcementTimer);
      announcementTimer = undefined;
    }
    if (ANNOUNCES_DETAILS.test(message)) {
      announcement = message;
      announcementTimer = setTimeout(sendAnnouncement, detailWaitMs);
      return;
    }
    emit(message);
  }

  function resolve(line: string): void {
    inRun = false;
    if (!unresolved) return;
    unresolved = false;
    sendGroup();
    sendAnnouncement();
    stats.resolved += 1;
    options.onResolved?.(line.trim());
  }

  // The last success-line search: in `searchedText` from `searchedFrom`, the first success line
  // starts at `successAt` (-1: none). Positions only grow within one text, so later lookups reuse
  // it instead of searching the same stretch again.
  let searchedText: string | null = null;
  let searchedFrom = 0;
  let successAt = -1;

  function nextSuccessLine(text: string, from: number): number {
    const reusable = searchedText === text && from >= searchedFrom && (successAt === -1 || successAt >= from);
    if (!reusable) {
      successMatcher.lastIndex = from;
      searchedText = text;
      searchedFrom = from;
      successAt = successMatcher.exec(text)?.index ?? -1;
    }
    return successAt;
  }

  /** While errors are unresolved, looks for a success line among the complete lines of `text` in [from, to). */
  function findResolution(text: string, from: number, to: number): void {
    if (!unresolved || from >= to) return;
    const at = nextSuccessLine(text, from);
    if (at === -1 || at >= to) return;
    // Continuation lines before the success line still belong to the error above them.
    takeContinuations(text, from, at);
    resolve(text.slice(at, text.indexOf("\n", at)));
  }

  function append(line: string): void {
    // `line` is a slice that would keep its whole chunk alive while the group waits; slicing a
    // joined string makes V8 copy it first, so only the line itself is retained.
    group.push(` ${line}`.slice(1));
    groupChars += line.length + 1;
    if (groupChars >= maxGroupChars) {
      inRun = false;
      sendGroup();
      return;
    }
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(sendGroup, groupDelayMs);
  }

  /** Appends the continuation lines starting at `pos` (a line start), stopping before `limit`. */
  function takeContinuations(text: string, pos: number, limit: number): void {
    while (inRun && pos < limit) {
      const end = text.indexOf("\n", pos);
      const line = text.slice(pos, end);
      if (!isContinuation(line)) {
        inRun = false;
        return;
      }
      append(line);
      pos = end + 1;
    }
  }

  /** Runs the matcher over `text`, which holds complete, ANSI-free lines, each ending with `\n`. */
  function scanClean(text: string): void {
    let pos = 0;
    matcher.lastIndex = 0;
    for (let match = matcher.exec(text); match !== null; match = matcher.exec(text)) {
      const lineStart = text.lastIndexOf("\n", match.index) + 1;
      const lineEnd = text.indexOf("\n", match.index);
      findResolution(text, pos, lineStart);
      takeContinuations(text, pos, lineStart);
      const line = text.slice(lineStart, lineEnd);
      if (isSuccessLine(line)) {
        resolve(line);
      } else {
        stats.errorLines += 1;
        inRun = true;
        unresolved = true;
        append(line);
      }
      pos = lineEnd + 1;
      matcher.lastIndex = pos;
    }
    findResolution(text, pos, text.length);
    takeContinuations(text, pos, text.length);
  }

  /**
   * Scans complete lines that may hold terminal escapes. Stripping copies, so only lines that
   * contain an escape are cleaned; the rest is matched where it lies (slices share memory).
   */
  function scanLines(text: string): void {
    let pos = 0;
    let escapedLines = 0;
    for (let escape = text.indexOf("\u001b"); escape !== -1; escape = text.indexOf("\u001b", pos)) {
      if (++escapedLines > ESCAPED_LINES_ONE_BY_ONE) {
        scanClean(stripAnsi(text.slice(pos)));
        return;
      }
      const lineStart = text.lastIndexOf("\n", escape) + 1;
      const lineEnd = text.indexOf("\n", escape) + 1;
      if (lineStart > pos) scanClean(text.slice(pos, lineStart));
      scanClean(stripAnsi(text.slice(lineStart, lineEnd)));
      pos = lineEnd;
    }
    if (pos < text.length) scanClean(pos === 0 ? text : text.slice(pos));
  }

  function write(chunk: string): void {
    if (closed || chunk === "") return;
    let text = pendingCarriageReturn ? `\r${chunk}` : chunk;
    pendingCarriageReturn = false;
    if (text.includes("\r")) {
      // A CR at the very end may be the first half of a CRLF split across chunks.
      pendingCarriageReturn = text.endsWith("\r");
      text = (pendingCarriageReturn ? text.slice(0, -1) : text).replace(/\r\n?/g, "\n");
    }
    const firstBreak = text.indexOf("\n");
    if (firstBreak === -1) {
      carry += text;
      if (carry.length > maxLineChars) flushCarry();
      return;
    }
    // The carried partial line is completed by this chunk's first line; only that short piece is
    // joined, because joining whole chunks would make V8 copy each one before matching.
    if (carry !== "") {
      const head = carry + text.slice(0, firstBreak + 1);
      carry = "";
      scanLines(head);
      text = text.slice(firstBreak + 1);
    }
    const lastBreak = text.lastIndexOf("\n");
    carry = text.slice(lastBreak + 1);
    if (lastBreak >= 0) scanLines(lastBreak === text.length - 1 ? text : text.slice(0, lastBreak + 1));
  }

  function flushCarry(): void {
    const rest = carry;
    carry = "";
    if (rest !== "") scanLines(`${rest}\n`);
  }

  function flush(): void {
    pendingCarriageReturn = false;
    flushCarry();
    inRun = false;
    sendGroup();
    sendAnnouncement();
  }

  return {
    write,
    flush,
    close() {
      if (closed) return;
      flush();
      closed = true;
    },
    get stats() {
      return { ...stats };
    },
  };
}
