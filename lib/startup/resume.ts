import { mapWithConcurrency } from "@/lib/bundles/pool";
import { log } from "@/lib/log";
import { getSandboxProvider } from "@/lib/sandbox";
import type { SqlExecutor } from "@/lib/store";
import { listProjectsWithPreview, type Project } from "@/lib/store/projects";
import { afterSandboxStart } from "@/lib/workspace";

/** Projects whose dev servers are brought back at once; the rest wait their turn (each start runs Metro). */
export const RESUME_CONCURRENCY = 2;

export interface ResumeOutcome {
  projectId: string;
  ok: boolean;
  backendDevServer?: boolean;
}

async function resumeProject(project: Project): Promise<ResumeOutcome> {
  try {
    const sandbox = await getSandboxProvider().connect(project.sandboxId!);
    const { backendDevServer } = await afterSandboxStart(sandbox, project);
    return { projectId: project.id, ok: true, backendDevServer };
  } catch (error) {
    // One broken sandbox must not keep the others down; the user's next action retries it.
    log.warn("resuming the dev servers of a project failed", { projectId: project.id, error });
    return { projectId: project.id, ok: false };
  }
}

/**
 * After a service start: every project that served a preview gets its app dev server back, and
 * a connected one its backend dev server (the sandbox start hook), `concurrency` projects at a time.
 */
export async function resumeDevServers(db: SqlExecutor, concurrency = RESUME_CONCURRENCY): Promise<ResumeOutcome[]> {
  const projects = await listProjectsWithPreview(db);
  const outcomes = await mapWithConcurrency(projects, concurrency, resumeProject);
  log.info("dev servers resumed", {
    projects: outcomes.length,
    failed: outcomes.filter((outcome) => !outcome.ok).map((outcome) => outcome.projectId),
  });
  return outcomes;
}
