"use client";

import { useState } from "react";
import type { ApiScreenshots } from "@/lib/api-contract/types";
import { callJobOrToast, messageOf } from "./api";

export interface Screenshots {
  mobileUrl: string;
  desktopUrl: string;
  /** ISO 8601. */
  takenAt: string;
}

/** `2026-11-24 07:30 UTC`: the same text on the server and in the browser, whatever their time zones. */
const utcMinute = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

/** Takes screenshots of the app preview (POST /api/projects/<id>/screenshots, a background job) and shows both. */
export function ScreenshotsPanel({ projectId, previewUrl, initial }: { projectId: string; previewUrl: string | null; initial: Screenshots | null }) {
  const [shots, setShots] = useState(initial);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function take() {
    setPending(true);
    setError(null);
    try {
      const answer = await callJobOrToast<ApiScreenshots>(`/api/projects/${encodeURIComponent(projectId)}/screenshots`, { method: "POST" });
      // Fixed blob paths are overwritten in place: a fresh query defeats the browser cache.
      const version = Date.now();
      setShots({ mobileUrl: `${answer.mobileUrl}?v=${version}`, desktopUrl: `${answer.desktopUrl}?v=${version}`, takenAt: new Date(version).toISOString() });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setPending(false);
    }
  }

  return (
    <section id="screenshots" className="card stack" aria-labelledby="screenshots-title">
      <div className="row spread">
        <h2 id="screenshots-title">Screenshots</h2>
        <button type="button" onClick={take} disabled={pending || !previewUrl}>
          {pending ? "Taking…" : "Take screenshots"}
        </button>
      </div>
      {!previewUrl && <p className="muted">The project has no running preview.</p>}
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
      {shots ? (
        <>
          <p className="small muted">
            Taken{" "}
            <time dateTime={shots.takenAt} data-testid="screenshots-taken-at">
              {utcMinute(shots.takenAt)}
            </time>
          </p>
          <div className="shots">
            <figure>
              {/* eslint-disable-next-line @next/next/no-img-element -- blob URLs from any store */}
              <img src={shots.mobileUrl} alt="Mobile screenshot (375×667 @2x)" data-testid="screenshot-mobile" />
              <figcaption className="small muted">Mobile</figcaption>
            </figure>
            <figure>
              {/* eslint-disable-next-line @next/next/no-img-element -- blob URLs from any store */}
              <img src={shots.desktopUrl} alt="Desktop screenshot (1920×1080)" data-testid="screenshot-desktop" />
              <figcaption className="small muted">Desktop</figcaption>
            </figure>
          </div>
        </>
      ) : (
        !error && previewUrl && <p className="muted">No screenshots yet.</p>
      )}
    </section>
  );
}
