"use client";

import { useEffect, useState } from "react";
import type { ToolchainState } from "@/lib/toolchain/state";
import { callApi } from "./api";

const POLL_MS = 2_000;

/**
 * The "preparing app toolchain" step: shown while the template's npm dependencies are installed
 * on first use, or when that failed (with npm's reason and a retry). Hidden once it is ready.
 */
export function ToolchainStep({ initial }: { initial: ToolchainState }) {
  const [status, setStatus] = useState(initial);
  const [error, setError] = useState<string | null>(null);

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
          {status.state === "preparing" && status.packages > 0 && <span className="small muted"> · {status.packages} packages so far</span>}
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
