import type { BackendProjectState } from "@/lib/store/projects";

const LABELS = { none: "Not connected", connecting: "Connecting", connected: "Connected", failed: "Failed" } as const;

/** The backend state of a project as a coloured label. */
export function BackendBadge({ state }: { state: BackendProjectState | null }) {
  const kind = state?.kind ?? "none";
  return (
    <span className={`badge badge-${kind}`} data-backend-state={kind}>
      {LABELS[kind]}
    </span>
  );
}
