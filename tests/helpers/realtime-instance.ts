/**
 * Instance A of tests/realtime/fan-out-instances.test.ts, a server process of its own on the
 * shared DATABASE_URL (so the postgres realtime driver). It opens an SSE stream of PROJECT_ID's
 * notifications on itself, scans dev-server output (two errors and the success between them), as the backend dev
 * server's scanner does, then sends a notification with message END_MESSAGE. It reads its own
 * stream up to that one and prints the events it got as one JSON line.
 */
import { pathToFileURL } from "node:url";
import { createErrorReporter } from "@/lib/devlog";
import { buildErrorNotification, getRealtime } from "@/lib/realtime";
import { errorNotificationSource, sendErrorNotification } from "@/lib/realtime/error-notifications";
import { createSseResponse } from "@/lib/realtime/sse";
import { resetProcessSingletons } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { SseReader, type SseFrame } from "../realtime/sse-client";

export const SCANNED_OUTPUT = [
  "- Preparing Convex functions...",
  "✖ Error: Unable to start push to https://happy-animal-123.convex.cloud",
  "✔ 13:28:03 Convex functions ready! (8.35s)",
  '✘ [ERROR] Could not resolve "./lib"',
  "",
].join("\n");

/** Whether `frame` is the notification with message `message`. */
export const isNotification = (frame: SseFrame, message: string): boolean =>
  frame.event !== undefined && (JSON.parse(frame.data ?? "null") as { message?: string }).message === message;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const projectId = process.env.PROJECT_ID as string;
  const endMessage = process.env.END_MESSAGE as string;
  const db = await getStore();
  const abort = new AbortController();
  const response = createSseResponse({ source: errorNotificationSource(db, projectId), signal: abort.signal });
  const reader = new SseReader(response.body as ReadableStream<Uint8Array>);
  await reader.next();
  await getRealtime().ready?.();

  const reporter = createErrorReporter({ projectId, source: "backend-dev" });
  reporter.write(SCANNED_OUTPUT);
  await reporter.close();
  await sendErrorNotification(buildErrorNotification({ projectId, source: "backend-dev", type: "resolved", message: endMessage }));
  const frames = await reader.until((frame) => isNotification(frame, endMessage));
  abort.abort();
  console.log(JSON.stringify(frames.filter((frame) => frame.event)));
  await resetProcessSingletons();
  process.exit(0);
}
