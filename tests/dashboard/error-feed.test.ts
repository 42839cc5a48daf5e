import { describe, expect, it } from "vitest";
import { addNotification, isErrorNotification, type ErrorGroup } from "@/app/_components/error-feed";
import type { ErrorNotification } from "@/lib/realtime";

const notification = (message: string, timestamp: string, overrides: Partial<ErrorNotification> = {}): ErrorNotification => ({
  message,
  timestamp,
  projectId: "p1",
  type: "backend-error",
  source: "backend-dev",
  ...overrides,
});

const feed = (...notifications: ErrorNotification[]) =>
  notifications.reduce<ErrorGroup[]>((groups, next) => addNotification(groups, next), []);

describe("error feed grouping", () => {
  it("counts identical errors in one group that moves to the top with its latest time", () => {
    const groups = feed(
      notification("Error: a", "2026-01-01T00:00:01.000Z"),
      notification("Error: b", "2026-01-01T00:00:02.000Z"),
      notification("Error: a", "2026-01-01T00:00:03.000Z"),
    );
    expect(groups.map(({ message, count, firstAt, lastAt }) => ({ message, count, firstAt, lastAt }))).toEqual([
      { message: "Error: a", count: 2, firstAt: "2026-01-01T00:00:01.000Z", lastAt: "2026-01-01T00:00:03.000Z" },
      { message: "Error: b", count: 1, firstAt: "2026-01-01T00:00:02.000Z", lastAt: "2026-01-01T00:00:02.000Z" },
    ]);
  });

  it("keeps the same message from another source or of another type apart", () => {
    const groups = feed(
      notification("Error: x", "2026-01-01T00:00:01.000Z"),
      notification("Error: x", "2026-01-01T00:00:02.000Z", { source: "app-dev", type: "runtime-error" }),
      notification("Error: x", "2026-01-01T00:00:03.000Z", { type: "build-error" }),
    );
    expect(groups).toHaveLength(3);
    expect(groups.every((group) => group.count === 1)).toBe(true);
  });

  it("drops the least recently seen groups beyond the limit", () => {
    let groups: ErrorGroup[] = [];
    for (const name of ["a", "b", "c", "a", "d"]) groups = addNotification(groups, notification(name, "2026-01-01T00:00:00.000Z"), 3);
    expect(groups.map((group) => group.message)).toEqual(["d", "a", "c"]);
  });

  it("marks the groups of a source resolved on its resolved notification, and a new occurrence clears the mark", () => {
    const resolvedAt = "2026-01-01T00:00:03.000Z";
    let groups = feed(
      notification("Error: a", "2026-01-01T00:00:01.000Z"),
      notification("Error: b", "2026-01-01T00:00:02.000Z", { source: "app-dev", type: "runtime-error" }),
      notification("✔ Convex functions ready!", resolvedAt, { type: "resolved" }),
    );
    expect(groups.map(({ message, resolved }) => ({ message, resolved }))).toEqual([
      { message: "Error: b", resolved: false },
      { message: "Error: a", resolved: true },
    ]);
    groups = addNotification(groups, notification("Error: a", "2026-01-01T00:00:04.000Z"));
    expect(groups.map(({ message, resolved, count }) => ({ message, resolved, count }))).toEqual([
      { message: "Error: a", resolved: false, count: 2 },
      { message: "Error: b", resolved: false, count: 1 },
    ]);
  });

  it("groups structured errors by fingerprint, shows the latest one's location, and resolves only the errors a resolved notification names", () => {
    const typeError = { kind: "typecheck", file: "convex/x.ts", line: 3, column: 14, fingerprint: "f1", resolvedAt: null } as const;
    let groups = feed(
      notification("convex/x.ts:3:14 - error TS2322: …", "2026-01-01T00:00:01.000Z", { ...typeError, type: "build-error" }),
      notification("Error: legacy", "2026-01-01T00:00:02.000Z"),
      notification("✖ push failed", "2026-01-01T00:00:03.000Z", { kind: "push", fingerprint: "f2", resolvedAt: null }),
      // Moved by an edit: the same error.
      notification("convex/x.ts:5:14 - error TS2322: …", "2026-01-01T00:00:04.000Z", { ...typeError, line: 5, type: "build-error" }),
    );
    expect(groups.map(({ kind, location, count }) => ({ kind, location, count }))).toEqual([
      { kind: "typecheck", location: "convex/x.ts:5:14", count: 2 },
      { kind: "push", location: undefined, count: 1 },
      { kind: undefined, location: undefined, count: 1 },
    ]);
    groups = addNotification(groups, notification("✔ ready", "2026-01-01T00:00:05.000Z", { type: "resolved", resolves: ["f1"] }));
    // The named error and the one without a fingerprint (stored before errors had one) are resolved.
    expect(groups.map(({ message, resolved }) => ({ message, resolved }))).toEqual([
      { message: "convex/x.ts:5:14 - error TS2322: …", resolved: true },
      { message: "✖ push failed", resolved: false },
      { message: "Error: legacy", resolved: true },
    ]);
  });

  it("shows an error from the history that was resolved since as resolved", () => {
    const [group] = feed(notification("✖ push failed", "2026-01-01T00:00:01.000Z", { fingerprint: "f2", resolvedAt: "2026-01-01T00:00:02.000Z" }));
    expect(group.resolved).toBe(true);
  });

  it("accepts only payloads of the notification shape", () => {
    expect(isErrorNotification(notification("Error: a", "2026-01-01T00:00:00.000Z"))).toBe(true);
    expect(isErrorNotification({ message: "no time" })).toBe(false);
    expect(isErrorNotification(null)).toBe(false);
    expect(isErrorNotification("Error: a")).toBe(false);
  });
});
