"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import type { ToolchainProgress, ToolchainState } from "@/lib/toolchain/state";
import { callApi } from "./api";

const POLL_MS = 2_000;

const PHASES: Record<ToolchainProgress["phase"], string> = {
  resolving: "resolving dependencies",
  downloading: "downloading packages",
  finishing: "finishing",
};

/** Where the install is, in words: its phase and what npm has counted so far. */
function progressOf(progress: ToolchainProgress): string {
  if (progress.phase === "resolving") return `${PHASES.resolving} · ${progress.manifests} package manifests read`;
  if (progress.phase === "finishing") return PHASES.finishing;
  const downloaded = progress.bytes > 0 ? `, ${(progress.bytes / 1e6).toFixed(1)} MB downloaded` : "";
  return `${PHASES.downloading} · ${progress.packages} packages${downloaded}`;
}

/**
 * The "preparing app toolchain" step: shown while the template's npm dependencies are installed
 * on first use (phase and counts), or when that failed (with npm's reason and a retry). Hidden
 * once it is ready; the page around it is then rendered again, since what it shows (a preview
 * that was waiting for the toolchain) may have changed.
 */
export function ToolchainStep({ initial }: { initial: ToolchainState }) {
  const router = useRouter();
  const [status, setStatus] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const wasPreparing = useRef(initial.state === "preparing");

  useEffect(() => {
    if (status.state === "preparing") wasPreparing.current = true;
    else if (status.state === "ready" && wasPreparing.current) {
      wasPreparing.current = false;
      router.refresh();
    }
  }, [status, router]);

  useEffect(() => {
    if (status.state !== "preparing") return;
    const timer = setTimeout(() => {
      callApi<ToolchainState>("/api/toolchain").then(setStatus, (failure: Error) => setError(failure.message));
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [status]);

  async function retry() {
    setError(null);
    try {
      setStatus(await callApi<ToolchainState>("/api/toolchain", { method: "POST" }));
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  if (status.state === "ready" || status.state === "idle") return null;
  return (
    <section className="card stack" aria-labelledby="toolchain-title" data-testid="toolchain-step" data-state={status.state}>
      <h2 id="toolchain-title">App toolchain</h2>
      <ol className="progress" aria-label="App toolchain">
        <li className={`step step-${status.state === "preparing" ? "current" : "pending"}`}>
          Preparing app toolchain (Expo, Metro, React Native Web; first use only)
          {status.state === "preparing" && (
            <span className="small muted" data-testid="toolchain-progress">
              {" "}
              · {progressOf(status)}
            </span>
          )}
        </li>
      </ol>
      {status.state === "failed" && (
        <p className="alert" role="alert">
          {status.message}{" "}
          <button type="button" className="link-button" onClick={retry}>
            Retry
          </button>
        </p>
      )}
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
