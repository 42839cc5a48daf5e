import type { Sandbox } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { buildBundleInSandbox, type BuildStaticBundleOptions, type BuildStaticBundleResult } from "./build";
import { resolveCommit } from "./commit";

export interface ProjectBuildRequest {
  /** Commit the bundle is filed under. @defaultValue the app repository's HEAD */
  commitSha?: string;
  /** @defaultValue HEAD's message when building HEAD, else empty */
  commitMessage?: string;
}

/**
 * Builds and uploads the static iOS bundle of a project from its sandbox (the route and the CLI).
 * Throws AppErrors for what must be fixed before a build can start (no sandbox, no commit, an
 * invalid commit id); the build itself answers `{ success: false }` like spec 4.4.
 */
export async function buildProjectBundle(
  project: Project,
  sandbox: Sandbox,
  request: ProjectBuildRequest = {},
  options: BuildStaticBundleOptions = {},
): Promise<BuildStaticBundleResult & { commitSha: string }> {
  const commit = await resolveCommit(sandbox, request);
  const result = await buildBundleInSandbox(sandbox, { projectId: project.id, commitSha: commit.sha, commitMessage: commit.message }, options);
  return { ...result, commitSha: commit.sha };
}
