import Link from "next/link";
import { BackendAccountFacts } from "@/app/_components/backend-account";
import { EnvPanel } from "@/app/_components/env-panel";
import { getBackendSettings } from "@/lib/cloud/backend-settings";
import { getConfig } from "@/lib/config";
import { requireSessionProject } from "@/lib/session/current";
import { getStore } from "@/lib/store";
import { deploymentDashboardBase, readBackendSnapshot } from "../data";

export const dynamic = "force-dynamic";
export const metadata = { title: "Deployment · Cloud backend service" };

/**
 * The project's deployment as a readable page: where it is, whose account holds it, and its
 * environment variables. The local emulator has no dashboard of its own, so its link opens this
 * page; a hosted deployment links to its real dashboard from here too.
 */
export default async function DeploymentPage({ params }: { params: Promise<{ id: string }> }) {
  const { project } = await requireSessionProject((await params).id);
  const snapshot = await readBackendSnapshot(await getStore(), project);
  const state = project.backendProject;
  const dashboardBase = deploymentDashboardBase(getBackendSettings(getConfig()));

  return (
    <main className="stack">
      <nav className="small">
        <Link href={`/projects/${project.id}`}>← {project.name}</Link>
      </nav>
      <h1>Deployment</h1>
      {state?.kind === "connected" ? (
        <>
          <section className="card stack" aria-label="Deployment">
            <dl className="facts">
              <dt>Deployment</dt>
              <dd>
                <code data-testid="deployment-name">{state.deploymentName}</code>
              </dd>
              <dt>URL</dt>
              <dd>
                <code>{state.deploymentUrl}</code>
              </dd>
              <BackendAccountFacts teamSlug={state.teamSlug} projectSlug={state.projectSlug} account={snapshot.account} />
              <dt>Runs on</dt>
              <dd>
                {dashboardBase ? (
                  <a href={dashboardBase + encodeURIComponent(state.deploymentName)} target="_blank" rel="noreferrer">
                    Open the backend dashboard
                  </a>
                ) : (
                  "The built-in local emulator (no hosted dashboard)"
                )}
              </dd>
            </dl>
          </section>
          <EnvPanel projectId={project.id} />
        </>
      ) : (
        <p className="muted">No backend is connected to this project.</p>
      )}
    </main>
  );
}
