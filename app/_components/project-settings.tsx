"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { ApiProject } from "@/lib/api-contract/types";
import { callApiOrToast } from "./api";
import { ConfirmStep } from "./confirm-step";
import { showToast } from "./toast";

/**
 * Rename the project (PATCH /api/projects/<id>) and delete it (DELETE, after a confirmation that
 * says what goes with it: the sandbox, the blobs, and a managed backend project).
 */
export function ProjectSettings({ projectId, initialName }: { projectId: string; initialName: string }) {
  const router = useRouter();
  const [name, setName] = useState(initialName);
  const [savedName, setSavedName] = useState(initialName);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const path = `/api/projects/${encodeURIComponent(projectId)}`;

  async function rename(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const project = await callApiOrToast<ApiProject>(path, { method: "PATCH", json: { name } });
      setSavedName(project.name);
      setName(project.name);
      showToast(`Renamed to “${project.name}”.`, "success");
      router.refresh();
    } catch {
      // The toast said why.
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setBusy(true);
    try {
      await callApiOrToast(path, { method: "DELETE" });
      showToast(`Deleted “${savedName}”.`, "success");
      router.push("/projects");
    } catch {
      setBusy(false);
    }
  }

  return (
    <section id="settings" className="card stack" aria-labelledby="settings-title">
      <h2 id="settings-title">Project settings</h2>
      <form onSubmit={rename} className="row" aria-label="Rename project">
        <input id="rename-project" aria-label="Project name" value={name} onChange={(event) => setName(event.target.value)} maxLength={100} required disabled={busy} />
        <button type="submit" disabled={busy || name.trim() === "" || name.trim() === savedName}>
          Rename
        </button>
      </form>
      {confirming ? (
        <ConfirmStep
          testId="delete-confirmation"
          action="Delete project"
          busyAction="Deleting…"
          busy={busy}
          onConfirm={remove}
          onCancel={() => setConfirming(false)}
        >
          <p>
            Delete <strong>{savedName}</strong> for good? Its sandbox, uploaded assets, bundles and screenshots are deleted, and a
            backend project managed by this service is deleted too (one on your own account is only disconnected).
          </p>
        </ConfirmStep>
      ) : (
        <div className="row">
          <button type="button" className="danger-outline" onClick={() => setConfirming(true)}>
            Delete project…
          </button>
        </div>
      )}
    </section>
  );
}
