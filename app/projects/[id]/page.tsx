import Link from "next/link";
import { AssetsPanel } from "@/app/_components/assets-panel";
import { BackendCard } from "@/app/_components/backend-card";
import { BundlesPanel } from "@/app/_components/bundles-panel";
import { ErrorPanel } from "@/app/_components/error-panel";
import { ProjectSettings } from "@/app/_components/project-settings";
import { RepositoryPanel } from "@/app/_components/repository-panel";
import { ScreenshotsPanel } from "@/app/_components/screenshots-panel";
import { ToastOnOpen } from "@/app/_components/toast";
import { ToolchainStep } from "@/app/_components/toolchain-step";
import { getBackendSettings } from "@/lib/cloud/backend-settings";
import { getConfig } from "@/lib/config";
import { readRepositoryStatus } from "@/lib/repository-mirror";
import { requireSessionProject } from "@/lib/session/current";
import { getStore } from "@/lib/store";
import { readAppToolchainStatus } from "@/lib/toolchain";
import { updateUrlOf } from "@/lib/updates/app-url";
import { listProjectBundles } from "@/lib/updates/releases";
import { deploymentDashboardBase, findScreenshots, readBackendSnapshot, realtimeClientSettings } from "./data";

export const dynamic = "force-dynamic";
export const metadata = { title: "Project · Cloud backend service" };

/**
 * A project: backend card, live errors, assets, screenshots, bundles and updates, code backup. Everything handed to the client
 * components is public: state, URLs, step names; credentials stay on the server.
 */
export default async function ProjectPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { project } = await requireSessionProject((await params).id);
  // The OAuth callback comes back here with `backend=connected`, or `backend_error_message` when connecting failed.
  const { backend: oauthOutcome, backend_error_message: oauthError } = await searchParams;
  const oauthFailure = typeof oauthError === "string" ? `Connecting your account did not work: ${oauthError}` : null;
  const config = getConfig();
  const settings = getBackendSettings(config);
  const db = await getStore();
  const [snapshot, screenshots, toolchain, bundles, repository] = await Promise.all([
    readBackendSnapshot(db, project),
    findScreenshots(project.id),
    readAppToolchainStatus(),
    listProjectBundles(db, project.id),
    readRepositoryStatus(project.id, db),
  ]);

  return (
    <main className="stack">
      <nav className="small">
        <Link href="/projects">← Projects</Link>
      </nav>
      <div className="row spread">
        <h1>{project.name}</h1>
        {project.previewUrl && (
          <a href={project.previewUrl} target="_blank" rel="noreferrer" className="button">
            Open preview
          </a>
        )}
      </div>
      <ToolchainStep initial={toolchain} />
      <div className="grid">
        <BackendCard
          projectId={project.id}
          initial={snapshot}
          oauthAvailable={Boolean(settings.oauthClientId && settings.oauthClientSecret)}
          dashboardBase={deploymentDashboardBase(settings)}
          notice={oauthFailure}
        />
        <ErrorPanel realtime={realtimeClientSettings(config, project.id)} />
        <AssetsPanel projectId={project.id} />
        <ScreenshotsPanel projectId={project.id} previewUrl={project.previewUrl} initial={screenshots} />
        <BundlesPanel
          projectId={project.id}
          updateUrl={updateUrlOf(project.id, config.PUBLIC_BASE_URL)}
          initial={bundles}
        />
        <RepositoryPanel status={repository} />
        <ProjectSettings projectId={project.id} initialName={project.name} />
      </div>
      <ToastOnOpen message={oauthFailure} tone="error" />
      <ToastOnOpen message={oauthOutcome === "connected" ? "Your backend account is connected." : null} tone="success" />
    </main>
  );
}
