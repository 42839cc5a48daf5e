import { getSandboxProvider } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { backendPushOf, isBackendDevServerRunning } from "./backend-dev-server";
import { missingSandboxWiring } from "./sandbox-setup";

/**
 * GET /api/backend/status: the spec 2.1 state, whether the backend dev server runs, its latest
 * push as its output tells (null when this process does not read its output: stopped, or started
 * before a restart of the service), and which pieces of the app's wiring a connected project
 * lacks (connected by managed connect, which skips the sandbox; enable finishes them). A project
 * without a sandbox gets none made here.
 */
export async function backendStatusOf(project: Project) {
  const state = project.backendProject;
  const sandbox = project.sandboxId ? await getSandboxProvider().connect(project.sandboxId) : null;
  const running = sandbox ? await isBackendDevServerRunning(sandbox) : false;
  const missing = sandbox && state?.kind === "connected" ? await missingSandboxWiring(sandbox, state.deploymentUrl) : [];
  const push = sandbox && running ? backendPushOf(sandbox) : null;
  return {
    backendProject: state,
    backendDevServer: running ? ("running" as const) : ("stopped" as const),
    backendPush: push && { state: push.state, at: push.at.toISOString() },
    missingSandboxWiring: missing,
  };
}
