"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import type { ApiEnvVariables } from "@/lib/api-contract/types";
import { callApi, callApiOrToast, messageOf } from "./api";
import { showToast } from "./toast";

type Variable = ApiEnvVariables["variables"][number];

/** The deployment's environment variables: names with masked values, and a form to set one. */
export function EnvPanel({ projectId }: { projectId: string }) {
  const [variables, setVariables] = useState<Variable[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const path = `/api/projects/${encodeURIComponent(projectId)}/env`;
  // Counts the list's answers that may still come: only the newest may set it. A first load still
  // on its way when a save answers would otherwise replace the saved list with the older one.
  const listRequest = useRef(0);

  useEffect(() => {
    const request = ++listRequest.current;
    callApi<ApiEnvVariables>(path).then(
      (answer) => request === listRequest.current && setVariables(answer.variables),
      (failure) => request === listRequest.current && setError(messageOf(failure)),
    );
    return () => {
      listRequest.current += 1;
    };
  }, [path]);

  async function save(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const answer = await callApiOrToast<ApiEnvVariables>(path, { method: "PUT", json: { values: { [name.trim()]: value } } });
      listRequest.current += 1;
      setVariables(answer.variables);
      showToast(`${name.trim()} is set.`, "success");
      setName("");
      setValue("");
    } catch {
      // The toast said why.
    } finally {
      setBusy(false);
    }
  }

  return (
    <section id="env" className="card stack" aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
      {variables && variables.length === 0 && <p className="muted">No variables yet.</p>}
      {variables && variables.length > 0 && (
        <dl className="facts env-list">
          {variables.map((variable) => (
            <div key={variable.name} className="contents" data-testid="env-variable" data-name={variable.name}>
              <dt>
                <code>{variable.name}</code>
              </dt>
              <dd className="muted" title={`${variable.valueLength} characters`}>
                {"•".repeat(Math.min(variable.valueLength, 12))}
              </dd>
            </div>
          ))}
        </dl>
      )}
      <form onSubmit={save} className="row" aria-label="Set a variable">
        <input aria-label="Variable name" placeholder="NAME" value={name} onChange={(event) => setName(event.target.value)} pattern="[A-Za-z_][A-Za-z0-9_]{0,39}" required disabled={busy} />
        <input aria-label="Variable value" type="password" placeholder="value" value={value} onChange={(event) => setValue(event.target.value)} required disabled={busy} autoComplete="off" />
        <button type="submit" disabled={busy || name.trim() === "" || value === ""}>
          Set
        </button>
      </form>
      <p className="small muted">Values are write-only here: they are stored on the deployment and never shown again.</p>
    </section>
  );
}
