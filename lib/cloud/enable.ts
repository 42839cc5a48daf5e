import { backendProjectNameFor, provisionManagedProject } from "@/lib/backend";
import { getConfig } from "@/lib/config";
import { NotConfiguredError } from "@/lib/errors";
import type { OpenProjectSandbox } from "@/lib/projects";
import { log } from "@/lib/log";
import { restartAppDevServer } from "@/lib/dev-servers";
import type { Sandbox } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { runProvisioning, type ConnectedState, type ProvisioningPlan, type RunnerOptions } from "./provisioning-run";
import { migrateLegacyBackendNames } from "./legacy-names";
import { getBackendSettings, isManagedModeConfigured, type BackendSettings } from "./backend-settings";
import { getBackendCredentials } from "./credentials";
import {
  checkLayoutBeforeEnable,
  completeSandboxWiring,
  finishSandboxSetup,
  injectBackendIntoSandbox,
  type SandboxWiringStep,
} from "./sandbox-setup";

type ManagedSettings = BackendSettings & { teamScopedToken: string; teamSlug: string };

/** Spec 5.1: managed mode needs the team token and slug; checked before anything is touched. */
export function requireManagedSettings(): ManagedSettings {
  const settings = getBackendSettings(getConfig());
  if (!isManagedModeConfigured(settings)) {
    throw new NotConfiguredError(
      "The cloud backend is not configured: set BACKEND_TEAM_SCOPED_TOKEN and BACKEND_TEAM_SLUG.",
      "backend_not_configured",
    );
  }
  return settings;
}

/** The sandbox half of a provisioning plan, shared by enable and the OAuth callback. */
export function sandboxSteps(sandbox: Sandbox, projectId: string): Pick<ProvisioningPlan, "prepareSandbox" | "finishSandbox"> {
  return {
    prepareSandbox: () => injectBackendIntoSandbox(sandbox),
    finishSandbox: (backend) => finishSandboxSetup(sandbox, projectId, backend),
  };
}

function managedProvision(settings: ManagedSettings, project: Project): ProvisioningPlan["provision"] {
  return (workflow) =>
    provisionManagedProject(
      { teamScopedToken: settings.teamScopedToken, teamSlug: settings.teamSlug, projectName: backendProjectNameFor(project.id) },
      { ...settings, ...workflow },
    );
}

/** What enable answers: the connected state, plus the sandbox steps it had to finish on a project connected without them. */
export type EnableResult = ConnectedState & { completedSandboxSteps?: SandboxWiringStep[] };

/**
 * POST /api/cloud/enable (spec 4.1): provisions a managed backend for the project and sets up its
 * sandbox, exactly once. An already connected project answers its stored state; when its sandbox
 * lacks the wiring (connected by managed connect, which skips the sandbox) the sandbox steps are
 * finished and reported. A layout with its own Convex provider that cannot be kept is refused
 * (409) before anything starts. The sandbox is opened (created on first use) once managed mode
 * is known to be configured.
 */
export async function enableCloudBackend(project: Project, openSandbox: OpenProjectSandbox, options: RunnerOptions = {}): Promise<EnableResult> {
  const settings = requireManagedSettings();
  const sandbox = await openSandbox(project);
  if (project.backendProject?.kind !== "connected") await checkLayoutBeforeEnable(sandbox);
  // A project enabled by an earlier version gets the real names now; the app must re-bundle.
  if (project.backendProject?.kind === "connected" && (await migrateLegacyBackendNames(sandbox))) {
    await restartAppDevServer(sandbox).catch((error: unknown) => log.warn("app dev server restart after the name migration failed", { error }));
  }
  const state = await runProvisioning(
    await getStore(),
    {
      projectId: project.id,
      userId: project.ownerId,
      kind: "enable",
      mode: "managed",
      provision: managedProvision(settings, project),
      ...sandboxSteps(sandbox, project.id),
    },
    options,
  );
  // Also after this run: it may have waited for a concurrent managed connect instead of running.
  const credentials = await getBackendCredentials(project.id);
  if (!credentials) return state;
  const { completed, warnings } = await completeSandboxWiring(sandbox, project.id, credentials);
  if (completed.length === 0) return state;
  log.info("enable finished the sandbox wiring of a connected project", { projectId: project.id, completed });
  const warningMessage = [state.warningMessage, ...warnings].filter(Boolean).join(" ");
  return { ...state, ...(warningMessage && { warningMessage }), completedSandboxSteps: completed };
}

/** POST /api/backend/managed/connect: the same provisioning without touching the sandbox. */
export async function connectManagedBackend(project: Project, options: RunnerOptions = {}): Promise<ConnectedState> {
  const settings = requireManagedSettings();
  return runProvisioning(
    await getStore(),
    { projectId: project.id, userId: project.ownerId, kind: "connect", mode: "managed", provision: managedProvision(settings, project) },
    options,
  );
}
