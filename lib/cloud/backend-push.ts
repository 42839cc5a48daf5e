import { isSuccessLine } from "@/lib/devlog";
import { stripAnsi } from "@/lib/log/ansi";

/**
 * The backend dev server's push, as `npx convex dev` reports it in its output: `pushing` from its
 * start until its first outcome, then the outcome of the latest push: `pushed` (its success line,
 * `✔ 13:28:03 Convex functions ready! (2.1s)`) or `failed` (its failure mark ✖: a typecheck, a
 * push the deployment refused; or esbuild's `✘ [ERROR]`: a module that does not bundle).
 */
export type BackendPushState = "pushing" | "pushed" | "failed";

export interface BackendPush {
  state: BackendPushState;
  /** When the state was reached. */
  at: Date;
  /** When the service saw this push start (the server's start, or the CLI's `Preparing` line). */
  startedAt: Date;
}

const FUNCTIONS_READY = /Convex functions ready!/;
/** Each push of `convex dev` begins with this spinner, printed as a line without a terminal (`CI=1`). */
const PUSH_START = /^[ \t]*- Preparing Convex functions\.\.\./;
const FAILURE_MARK = /^[ \t]*(?:\u2716|\u2718 \[ERROR\])/;

/** Whether a line of the CLI's output announces the start of a push. */
export function isPushStartLine(line: string): boolean {
  return PUSH_START.test(stripAnsi(line));
}

/** The push outcome a line of the CLI's output announces, or null for every other line. */
export function pushOutcomeOf(line: string): Exclude<BackendPushState, "pushing"> | null {
  const text = stripAnsi(line);
  if (isSuccessLine(text) && FUNCTIONS_READY.test(text)) return "pushed";
  if (FAILURE_MARK.test(text)) return "failed";
  return null;
}
