import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { classifyError, createErrorReporter } from "@/lib/devlog/reporter";
import { createProject } from "@/lib/projects";
import memory from "@/lib/realtime/drivers/memory";
import { listStoredErrorNotifications, type StoredErrorNotification } from "@/lib/realtime/error-notifications";
import { RealtimePublishError } from "@/lib/realtime/errors";
import { MAX_EVENT_DATA_BYTES } from "@/lib/realtime/limits";
import type { ErrorNotification } from "@/lib/realtime/payload";
import type { Realtime, RealtimeMessage } from "@/lib/realtime/port";
import { getStore } from "@/lib/store";
import { createTestUser } from "../helpers/users";
import { CLI_TYPECHECK_FAILED, TSC_ONE_ERROR } from "./recordings";

let PROJECT_ID: string;
let CHANNEL: string;

// A project each: unresolved errors of one test would be resolved by the next one's first success.
beforeEach(async () => {
  const db = await getStore();
  const owner = await createTestUser(db, "Reporter");
  PROJECT_ID = (await createProject(db, owner.user.id, "Reporter app")).id;
  CHANNEL = `private-${PROJECT_ID}-errors`;
});

function listen(realtime = memory({})) {
  const received: RealtimeMessage[] = [];
  realtime.subscribe(CHANNEL, (message) => received.push(message));
  const payloads = () => received.map((message) => message.payload as StoredErrorNotification);
  return { realtime, received, payloads };
}

describe("createErrorReporter", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date("2026-03-04T05:06:07.000Z") });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("publishes each error group as error-notification on private-<project_id>-errors, 500 ms after its last line", async () => {
    const { realtime, received, payloads } = listen();
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    reporter.write("- Preparing Convex functions...\n\u001b[31m✖\u001b[39m Error: Unable to start push");
    reporter.write(" to https://happy-animal-123.convex.cloud\n- Preparing Convex functions...\n");
    await vi.advanceTimersByTimeAsync(499);
    expect(received).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    // Stored first, then published: wait for the store's round trip.
    await vi.waitFor(() => expect(received.map((message) => message.event)).toEqual(["error-notification"]));
    expect(payloads()).toEqual([
      {
        id: expect.stringMatching(/^[0-9]+$/),
        message: "✖ Error: Unable to start push to https://happy-animal-123.convex.cloud",
        timestamp: "2026-03-04T05:06:07.500Z",
        projectId: PROJECT_ID,
        type: "backend-error",
        source: "backend-dev",
        kind: "push",
        fingerprint: expect.stringMatching(/^[0-9a-f]{24}$/),
        firstSeenAt: "2026-03-04T05:06:07.500Z",
        resolvedAt: null,
      },
    ]);
  });

  it("delivers a 50 KB multi-line error truncated below the event limit, not dropped", async () => {
    const { realtime, received, payloads } = listen();
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    const frames = Array.from({ length: 1700 }, (_, index) => `    at handler${index} (convex/messages.ts:${index}:1)`);
    const output = `Failed to analyze messages.js: Uncaught ReferenceError: foo is not defined\n${frames.join("\n")}\n`;
    expect(output.length).toBeGreaterThan(50_000);
    reporter.write(output);
    await reporter.flush();
    expect(received).toHaveLength(1);
    const [payload] = payloads();
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThan(MAX_EVENT_DATA_BYTES);
    expect(payload.message.startsWith("Failed to analyze messages.js")).toBe(true);
    expect(payload.message.endsWith(frames.at(-1) as string)).toBe(true);
    expect(payload.message).toMatch(/characters truncated/);
  });

  it("redacts an admin key printed by the dev command", async () => {
    const { realtime, payloads } = listen();
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    reporter.write("✖ Error: bunx convex dev --admin-key project:team:app|eyJ2MiI6InNlY3JldCJ9 exited\n");
    await reporter.close();
    expect(payloads()[0].message).not.toContain("eyJ2MiI6InNlY3JldCJ9");
  });

  it("keeps scanning and publishing in order after a publish fails for good", async () => {
    const delivered: string[] = [];
    let failNext = true;
    const realtime: Realtime = {
      name: "flaky",
      async publish(_channel, _event, payload) {
        if (failNext) {
          failNext = false;
          throw new RealtimePublishError(400, "refused");
        }
        delivered.push((payload as ErrorNotification).message);
      },
    };
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "app-dev", realtime, retryDelayMs: 0 });
    reporter.write("Error: first\n");
    await vi.advanceTimersByTimeAsync(500);
    reporter.write("Error: second\n");
    await vi.advanceTimersByTimeAsync(500);
    reporter.write("Error: third\n");
    await reporter.flush();
    expect(delivered).toEqual(["Error: second", "Error: third"]);
    expect(reporter.stats).toEqual({ errorLines: 3, groups: 3, resolved: 0 });
  });
});

describe("resolved notifications", () => {
  it("sends resolved after the errors once the dev server reports success, and stores both", async () => {
    const { realtime, payloads } = listen();
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    reporter.write("✖ Error: Unable to push deployment config\n");
    reporter.write("\u001b[32m✔\u001b[39m 13:28:03 Convex functions ready! (8.35s)\n");
    await reporter.flush();
    const [error, resolved] = payloads();
    expect(payloads().map(({ type, message }) => ({ type, message }))).toEqual([
      { type: "backend-error", message: "✖ Error: Unable to push deployment config" },
      // The shared redaction reads "Convex <word>" as an authorization header; the UI only needs the type.
      { type: "resolved", message: expect.stringMatching(/^✔ 13:28:03 Convex .* ready! \(8\.35s\)$/) },
    ]);
    expect(resolved).toMatchObject({ resolvedAt: resolved.timestamp, resolves: [error.fingerprint] });
    expect(reporter.stats.resolved).toBe(1);
    // The stored error carries its resolution; the resolved notification is stored as sent.
    const stored = await listStoredErrorNotifications(await getStore(), PROJECT_ID);
    expect(stored).toEqual([{ ...error, resolvedAt: resolved.timestamp }, resolved]);
  });

  it("the first success of a restarted dev server resolves the errors its earlier run left unresolved", async () => {
    const { realtime, payloads } = listen();
    const first = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    first.write(CLI_TYPECHECK_FAILED + TSC_ONE_ERROR);
    await first.close();
    // Another source's errors are not its to resolve.
    const app = createErrorReporter({ projectId: PROJECT_ID, source: "app-dev", realtime });
    app.write("TypeError: Cannot read properties of undefined (reading 'map')\n");
    await app.close();

    const restarted = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    restarted.write("✔ 13:30:00 Convex functions ready! (2.1s)\n✔ 13:30:09 Convex functions ready! (1.3s)\n");
    await restarted.close();
    const [typeError, appError, resolved, ...rest] = payloads();
    expect(rest).toEqual([]);
    expect(typeError).toMatchObject({ kind: "typecheck", file: "convex/count.ts", line: 3, column: 14 });
    expect(appError).toMatchObject({ kind: "app-runtime", source: "app-dev" });
    expect(resolved).toMatchObject({ type: "resolved", source: "backend-dev", resolves: [typeError.fingerprint] });
    const stored = await listStoredErrorNotifications(await getStore(), PROJECT_ID);
    expect(stored.map(({ kind, resolvedAt }) => ({ kind, resolvedAt }))).toEqual([
      { kind: "typecheck", resolvedAt: resolved.timestamp },
      { kind: "app-runtime", resolvedAt: null },
      { kind: undefined, resolvedAt: resolved.timestamp },
    ]);
  });

  it("sends nothing for a success without errors before it", async () => {
    const { realtime, received } = listen();
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    reporter.write("✔ 13:28:03 Convex functions ready! (8.35s)\n✔ 13:29:10 Convex functions ready! (1.02s)\n");
    await reporter.close();
    expect(received).toEqual([]);
  });
});

describe("repeats", () => {
  it("a repeat of an unresolved error is neither sent nor stored again; after its resolution it is a new error", async () => {
    const { realtime, payloads } = listen();
    const reporter = createErrorReporter({ projectId: PROJECT_ID, source: "backend-dev", realtime });
    // tsc runs again on each save: the same error, moved by an edit above it, at another time.
    reporter.write(CLI_TYPECHECK_FAILED + TSC_ONE_ERROR);
    await reporter.flush();
    reporter.write(CLI_TYPECHECK_FAILED + TSC_ONE_ERROR.replace("\u001b[93m3\u001b[0m:", "\u001b[93m4\u001b[0m:"));
    await reporter.flush();
    expect(payloads().map(({ type, kind }) => ({ type, kind }))).toEqual([{ type: "build-error", kind: "typecheck" }]);
    expect(await listStoredErrorNotifications(await getStore(), PROJECT_ID)).toHaveLength(1);

    reporter.write("✔ 13:28:03 Convex functions ready! (8.35s)\n");
    reporter.write(CLI_TYPECHECK_FAILED + TSC_ONE_ERROR);
    await reporter.close();
    const [first, resolved, again] = payloads();
    expect(resolved).toMatchObject({ type: "resolved", resolves: [first.fingerprint] });
    expect(again).toMatchObject({ kind: "typecheck", fingerprint: first.fingerprint, resolvedAt: null });
    expect(again.id).not.toBe(first.id);
  });
});

describe("classifyError", () => {
  it.each([
    ['✘ [ERROR] Could not resolve "x"', "backend-dev", "build-error"],
    ["src/a.ts:1:1 - error TS2322: Type 'number' is not assignable", "app-dev", "build-error"],
    ["✖ TypeScript typecheck via `tsc` failed.", "backend-dev", "build-error"],
    ["✖ esbuild failed: Error: Build failed with 1 error:", "backend-dev", "build-error"],
    ["error: bundling failed", "app-dev", "build-error"],
    ["✖ TypeError: fetch failed", "backend-dev", "backend-error"],
    ["✖ TypeError: fetch failed", "cloud-enable", "backend-error"],
    ["TypeError: Cannot read properties of undefined (reading 'map')", "app-dev", "runtime-error"],
  ] as const)("%s from %s is a %s", (message, source, type) => {
    expect(classifyError(message, source)).toBe(type);
  });
});
