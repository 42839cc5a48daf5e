import type { ErrorNotification } from "@/lib/realtime";

/** Identical errors (same source, type and message) shown as one entry with a count. */
export interface ErrorGroup {
  key: string;
  message: string;
  type: Exclude<ErrorNotification["type"], "resolved">;
  source: ErrorNotification["source"];
  count: number;
  /** ISO timestamps of the first and the latest occurrence. */
  firstAt: string;
  lastAt: string;
  /** The source reported success after the latest occurrence; a new occurrence clears it. */
  resolved: boolean;
}

/** Groups kept; the least recently seen are dropped beyond this. */
export const MAX_ERROR_GROUPS = 100;

const groupKey = (notification: ErrorNotification) => `${notification.source}\u0000${notification.type}\u0000${notification.message}`;

/**
 * The feed after one more notification: its group moves to the top with the count raised, or a
 * new group starts there; a `resolved` notification marks every group of its source resolved.
 * Pure, so the panel's state updates stay simple.
 */
export function addNotification(groups: ErrorGroup[], notification: ErrorNotification, limit = MAX_ERROR_GROUPS): ErrorGroup[] {
  const { type } = notification;
  if (type === "resolved") {
    return groups.map((group) => (group.source === notification.source && !group.resolved ? { ...group, resolved: true } : group));
  }
  const key = groupKey(notification);
  const existing = groups.find((group) => group.key === key);
  const updated: ErrorGroup = existing
    ? { ...existing, count: existing.count + 1, lastAt: notification.timestamp, resolved: false }
    : {
        key,
        message: notification.message,
        type,
        source: notification.source,
        count: 1,
        firstAt: notification.timestamp,
        lastAt: notification.timestamp,
        resolved: false,
      };
  return [updated, ...groups.filter((group) => group.key !== key)].slice(0, limit);
}

/** Whether a parsed event payload has the notification shape (anything else is ignored). */
export function isErrorNotification(value: unknown): value is ErrorNotification {
  const candidate = value as Partial<ErrorNotification> | null;
  return typeof candidate?.message === "string" && typeof candidate.timestamp === "string" && typeof candidate.source === "string" && typeof candidate.type === "string";
}
