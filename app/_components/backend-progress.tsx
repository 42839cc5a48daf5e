import type { BackendSnapshot, ProgressStep } from "@/app/projects/[id]/data";

const STEP_LABELS: Record<ProgressStep, string> = {
  created: "Create the backend project",
  provisioned: "Provision the development deployment",
  credentialsStored: "Store the credentials, encrypted",
  sandboxReady: "Set up the app: convex/ files, wrapper, convex package, .env.local, commit, dev servers",
};

/** The steps of a running enable/connect, ticked off as the journal records them. */
export function BackendProgress({ progress }: { progress: BackendSnapshot["progress"] }) {
  // Managed connect provisions without touching the sandbox.
  const steps = (Object.keys(STEP_LABELS) as ProgressStep[]).filter((step) => step !== "sandboxReady" || progress?.kind !== "connect");
  const finished = new Set(progress?.finished ?? []);
  const current = steps.find((step) => !finished.has(step));
  return (
    <ol className="progress" aria-label="Setup progress">
      {steps.map((step) => {
        const status = finished.has(step) ? "done" : step === current ? "current" : "pending";
        return (
          <li key={step} className={`step step-${status}`} data-step={step} data-status={status}>
            {STEP_LABELS[step]}
          </li>
        );
      })}
    </ol>
  );
}
