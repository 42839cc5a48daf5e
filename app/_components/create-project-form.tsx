"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { callApi, messageOf } from "./api";

/** Creates a project (POST /api/projects) and opens its page. */
export function CreateProjectForm() {
  const router = useRouter();
  const [name, setName] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setPending(true);
    setError(null);
    try {
      const project = await callApi<{ id: string }>("/api/projects", { json: { name } });
      router.push(`/projects/${project.id}`);
    } catch (failure) {
      setError(messageOf(failure));
      setPending(false);
    }
  }

  return (
    <form onSubmit={submit} className="card stack" aria-label="New project">
      <label htmlFor="project-name">New project</label>
      <div className="row">
        <input
          id="project-name"
          value={name}
          onChange={(event) => setName(event.target.value)}
          placeholder="My app"
          maxLength={100}
          required
          disabled={pending}
        />
        <button type="submit" className="primary" disabled={pending || name.trim() === ""}>
          {pending ? "Creating…" : "Create project"}
        </button>
      </div>
      {pending && <p className="muted small">Starting a sandbox with the starter app; this takes a few seconds.</p>}
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
