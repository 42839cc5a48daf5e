import type { ErrorNotification } from "@/lib/realtime";

/**
 * Repeats of one error (same source and fingerprint; without a fingerprint, same type and
 * message) shown as one entry with a count.
 */
export interface ErrorGroup {
  key: string;
  /** The latest occurrence's. */
  message: string;
  kind?: ErrorNotification["kind"];
  /** `file:line:column`, as far as known. */
  location?: string;
  fingerprint?: string;
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

const groupKey = (notification: ErrorNotification) =>
  notification.fingerprint
    ? `${notification.source}\u0000${notification.fingerprint}`
    : `${notification.source}\u0000${notification.type}\u0000${notification.message}`;

const locationOf = ({ file, line, column }: ErrorNotification) =>
  file === undefined ? undefined : [file, line, line === undefined ? undefined : column].filter((part) => part !== undefined).join(":");

/** Whether a `resolved` notification resolves the group: the errors it names, or all of its source when it names none. */
const resolvesGroup = (resolved: ErrorNotification, group: ErrorGroup) =>
  group.source === resolved.source && (!resolved.resolves || !group.fingerprint || resolved.resolves.includes(group.fingerprint));

/**
 * The feed after one more notification: its group moves to the top with the count raised, or a
 * new group starts there; a `resolved` notification marks the groups of the errors it resolves
 * resolved. A notification from the history that was resolved since arrives resolved.
 * Pure, so the panel's state updates stay simple.
 */
export function addNotification(groups: ErrorGroup[], notification: ErrorNotification, limit = MAX_ERROR_GROUPS): ErrorGroup[] {
  const { type } = notification;
  if (type === "resolved") {
    return groups.map((group) => (!group.resolved && resolvesGroup(notification, group) ? { ...group, resolved: true } : group));
  }
  const key = groupKey(notification);
  const existing = groups.find((group) => group.key === key);
  const latest = {
    message: notification.message,
    kind: notification.kind,
    location: locationOf(notification),
    lastAt: notification.timestamp,
    resolved: typeof notification.resolvedAt === "string",
  };
  const updated: ErrorGroup = existing
    ? { ...existing, ...latest, count: existing.count + 1 }
    : { key, ...latest, type, fingerprint: notification.fingerprint, source: notification.source, count: 1, firstAt: notification.timestamp };
  return [updated, ...groups.filter((group) => group.key !== key)].slice(0, limit);
}

/** Whether a parsed event payload has the notification shape (anything else is ignored). */
export function isErrorNotification(value: unknown): value is ErrorNotification {
  const candidate = value as Partial<ErrorNotification> | null;
  return typeof candidate?.message === "string" && typeof candidate.timestamp === "string" && typeof candidate.source === "string" && typeof candidate.type === "string";
}
