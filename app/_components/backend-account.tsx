import type { BackendSnapshot } from "@/app/projects/[id]/data";

/** The `Project` and `Account` rows of a connected backend's facts: where it lives and whose account holds it. */
export function BackendAccountFacts({ teamSlug, projectSlug, account }: { teamSlug: string; projectSlug: string; account: BackendSnapshot["account"] }) {
  return (
    <>
      <dt>Project</dt>
      <dd>
        <code>
          {teamSlug}/{projectSlug}
        </code>
      </dd>
      {account && (
        <>
          <dt>Account</dt>
          <dd data-testid="backend-account" data-account={account}>
            {account === "managed" ? "Managed by this service" : "Your own backend account"}
          </dd>
        </>
      )}
    </>
  );
}
