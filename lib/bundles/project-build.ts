import type { Sandbox } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { buildBundleInSandbox, type BuildStaticBundleInput, type BuildStaticBundleOptions, type BuildStaticBundleResult } from "./build";
import { commitWorkingTree, resolveCommit, workingTreeDiffersFrom } from "./commit";

export interface ProjectBuildRequest extends Pick<BuildStaticBundleInput, "platforms" | "channel" | "rolloutPercent"> {
  /** Commit the bundle is built of and filed under. @defaultValue the working tree, committed first */
  commitSha?: string;
  /** @defaultValue the built commit's message when no commit was named, else empty */
  commitMessage?: string;
}

/** What a build says about the working tree beside the commit it built. */
export interface WorkingTreeReport {
  /** No commit was named and the working tree had changes: they were committed and built. */
  workingTreeCommitted: boolean;
  /** The working tree differs from the built commit (only possible when a commit was named). */
  workingTreeDiffers: boolean;
}

/**
 * Builds, uploads and publishes the static bundles of a project from its sandbox (the route and the CLI).
 * Without a named commit it builds what the preview shows: the working tree, committed first so
 * the bundle's commit id names exactly what was built. With one, the answer says whether the
 * working tree differs from it. Throws AppErrors for what must be fixed before a build can start
 * (no sandbox, no commit, an invalid commit id); the build itself answers `{ success: false }` like spec 4.4.
 */
export async function buildProjectBundle(
  project: Project,
  sandbox: Sandbox,
  request: ProjectBuildRequest = {},
  options: BuildStaticBundleOptions = {},
): Promise<BuildStaticBundleResult & { commitSha: string } & WorkingTreeReport> {
  const workingTreeCommitted = request.commitSha === undefined ? await commitWorkingTree(sandbox) : false;
  const commit = await resolveCommit(sandbox, request);
  const workingTreeDiffers = request.commitSha === undefined ? false : await workingTreeDiffersFrom(sandbox, commit.sha);
  const { platforms, channel, rolloutPercent } = request;
  const result = await buildBundleInSandbox(
    sandbox,
    { projectId: project.id, commitSha: commit.sha, commitMessage: commit.message, platforms, channel, rolloutPercent },
    options,
  );
  return { ...result, commitSha: commit.sha, workingTreeCommitted, workingTreeDiffers };
}
