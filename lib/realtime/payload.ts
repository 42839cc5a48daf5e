import { stripAnsi } from "@/lib/log/ansi";
import { redactSecrets } from "@/lib/log/redact";

/** The event name frontends of such builders already listen for. */
export const ERROR_EVENT = "error-notification";

/**
 * A project's error notifications go to `private-<project_id>-errors` (spec 6.3's channel with
 * Pusher's private prefix): project ids appear in public blob URLs, so subscribing needs a
 * signature from the ownership-checked authorization route, not just the id.
 */
export function errorChannel(projectId: string): string {
  return `private-${projectId}-errors`;
}

const ERROR_CHANNEL = /^private-([0-9a-f-]{36})-errors$/;

/** The project id an error channel belongs to; null for any other channel. */
export function projectIdOfErrorChannel(channel: string): string | null {
  return ERROR_CHANNEL.exec(channel)?.[1] ?? null;
}

/** `resolved`: the dev server compiled or pushed successfully after reporting errors. */
export type ErrorNotificationType = "backend-error" | "runtime-error" | "build-error" | "resolved";
export type ErrorNotificationSource = "backend-dev" | "app-dev" | "cloud-enable";

/**
 * What failed: the backend's TypeScript check, its bundling (esbuild), its push (refused or not
 * delivered), its schema against stored documents, a function while running; the app's bundling
 * (Metro) or the app while running.
 */
export type ErrorKind = "typecheck" | "bundle" | "push" | "schema" | "function-runtime" | "app-bundle" | "app-runtime";

/** What an error's text tells beyond the message (lib/devlog/structure.ts); absent when not known. */
export interface ErrorDetails {
  kind?: ErrorKind;
  /** Relative to the app's folder, e.g. `convex/messages.ts`. */
  file?: string;
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
  /** The source lines around the error, as the tool printed them. */
  codeFrame?: string;
  /** A function error's function, e.g. `messages:send`. */
  functionName?: string;
  /** The same for every repeat of the error; a repeat is not sent again while it is unresolved. */
  fingerprint?: string;
  /** ISO 8601: when the error was first seen (repeats are not sent, so it stays the first). */
  firstSeenAt?: string;
  /** ISO 8601 once a later success of its dev server resolved the error; null until then. */
  resolvedAt?: string | null;
  /** On a `resolved` notification: the fingerprints of the errors it resolved. */
  resolves?: string[];
}

/** Payload of `error-notification` (DESIGN.md, Realtime), with the structure read from the error. */
export interface ErrorNotification extends ErrorDetails {
  /** ANSI-free, secrets redacted, truncated in the middle when too long. */
  message: string;
  /** ISO 8601. */
  timestamp: string;
  projectId: string;
  type: ErrorNotificationType;
  source: ErrorNotificationSource;
}

export interface ErrorNotificationInput {
  message: string;
  projectId: string;
  type: ErrorNotificationType;
  source: ErrorNotificationSource;
  /** @default now */
  timestamp?: Date;
  details?: ErrorDetails;
}

/**
 * Budget for the payload measured JSON-encoded twice, i.e. as the `data` string inside a Pusher
 * POST body. Below the 10 000-byte event limit with room for the channel and event names.
 */
export const MAX_NOTIFICATION_BYTES = 9_000;

const encodedSize = (payload: ErrorNotification) => Buffer.byteLength(JSON.stringify(JSON.stringify(payload)));

/** Moves a cut back by one when it would separate the halves of a surrogate pair. */
function avoidSplitPair(text: string, index: number): number {
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff ? index - 1 : index;
}

/** Keeps about `keep` characters: two thirds from the head (the error), one third from the tail. */
function truncateMiddle(text: string, keep: number): string {
  const headEnd = avoidSplitPair(text, Math.ceil((keep * 2) / 3));
  const tailStart = avoidSplitPair(text, text.length - (keep - headEnd));
  const omitted = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n… [${omitted} characters truncated] …\n${text.slice(tailStart)}`;
}

/** The longest middle-truncation of `message` whose payload fits the budget. */
function fitMessage(message: string, payload: ErrorNotification): string {
  const withMessage = (text: string) => ({ ...payload, message: text });
  if (encodedSize(withMessage(message)) <= MAX_NOTIFICATION_BYTES) return message;
  // Every character costs at least one byte, so more than the budget can never fit.
  let low = 0;
  let high = Math.min(message.length - 1, MAX_NOTIFICATION_BYTES);
  while (low < high) {
    const keep = Math.ceil((low + high) / 2);
    if (encodedSize(withMessage(truncateMiddle(message, keep))) <= MAX_NOTIFICATION_BYTES) low = keep;
    else high = keep - 1;
  }
  return truncateMiddle(message, low);
}

/**
 * Builds an `error-notification` payload: ANSI stripped, secrets redacted (before truncation, so
 * a cut can never expose part of a secret), then truncated so it stays under Pusher's limit
 * beside the details.
 * An oversized message is shortened, never dropped.
 */
export function buildErrorNotification(input: ErrorNotificationInput): ErrorNotification {
  const { codeFrame, ...details } = input.details ?? {};
  const payload: ErrorNotification = {
    message: "",
    timestamp: (input.timestamp ?? new Date()).toISOString(),
    projectId: input.projectId,
    type: input.type,
    source: input.source,
    ...details,
    // Source text can hold a secret as well as output can; frames are short (lib/devlog/structure.ts).
    ...(codeFrame === undefined ? {} : { codeFrame: redactSecrets(stripAnsi(codeFrame)) }),
  };
  return { ...payload, message: fitMessage(redactSecrets(stripAnsi(input.message)).trim(), payload) };
}
