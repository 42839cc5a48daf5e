"use client";

import { useEffect, useState } from "react";
import type { RealtimeClientSettings } from "@/app/projects/[id]/data";
import { addNotification, isErrorNotification, type ErrorGroup } from "./error-feed";
import { subscribeToErrors, type FeedStatus } from "./error-subscription";

const STATUS_LABELS: Record<FeedStatus, string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  offline: "Offline",
};

const SOURCE_LABELS: Record<ErrorGroup["source"], string> = {
  "backend-dev": "backend dev server",
  "app-dev": "app dev server",
  "cloud-enable": "cloud enable",
};

const timeOf = (iso: string) => new Date(iso).toLocaleTimeString();

/**
 * Dev-server errors of the project: the stored history (so they survive a page reload), then
 * live ones, identical ones grouped with a count; marked resolved when their dev server reports
 * success afterwards.
 */
export function ErrorPanel({ realtime }: { realtime: RealtimeClientSettings }) {
  const [groups, setGroups] = useState<ErrorGroup[]>([]);
  const [status, setStatus] = useState<FeedStatus>("connecting");
  const [search, setSearch] = useState("");
  const needle = search.trim().toLowerCase();
  const shown = needle
    ? groups.filter((group) =>
        `${group.message} ${SOURCE_LABELS[group.source]} ${group.type} ${group.kind ?? ""} ${group.location ?? ""}`.toLowerCase().includes(needle),
      )
    : groups;

  useEffect(
    () =>
      subscribeToErrors(realtime, {
        onStatus: setStatus,
        onPayload: (payload) => {
          if (isErrorNotification(payload)) setGroups((current) => addNotification(current, payload));
        },
      }),
    [realtime],
  );

  return (
    <section id="errors" className="card stack" aria-labelledby="errors-title">
      <div className="row spread">
        <h2 id="errors-title">Errors</h2>
        <span className="row small">
          <span className={`dot dot-${status}`} data-testid="error-feed-status" data-status={status} />
          {STATUS_LABELS[status]}
          {groups.length > 0 && (
            <button type="button" className="link-button" onClick={() => setGroups([])}>
              Clear
            </button>
          )}
        </span>
      </div>
      {groups.length > 0 && (
        <input
          type="search"
          className="search"
          placeholder="Search errors"
          aria-label="Search errors"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
      )}
      {groups.length === 0 ? (
        <p className="muted">No errors.</p>
      ) : shown.length === 0 ? (
        <p className="muted" data-testid="no-matching-errors">
          No error matches “{search.trim()}”.
        </p>
      ) : (
        <ul className="error-list" aria-label="Errors">
          {shown.map((group) => (
            <li key={group.key} className={`error error-${group.type}${group.resolved ? " error-resolved" : ""}`} data-resolved={group.resolved}>
              <div className="row spread small muted">
                <span>
                  {SOURCE_LABELS[group.source]} · {group.kind ?? group.type}
                  {group.location && (
                    <>
                      {" · "}
                      <code data-testid="error-location">{group.location}</code>
                    </>
                  )}
                  {group.resolved && " · resolved"}
                </span>
                <span>
                  {group.count > 1 && <span className="count">×{group.count}</span>}{" "}
                  <time dateTime={group.lastAt} title={`first ${timeOf(group.firstAt)}`}>
                    {timeOf(group.lastAt)}
                  </time>
                </span>
              </div>
              <pre>{group.message}</pre>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
