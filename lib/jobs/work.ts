import { getBlobStore } from "@/lib/blob";
import { buildProjectBundle, type ProjectBuildRequest } from "@/lib/bundles/project-build";
import { cleanupBundles } from "@/lib/bundles/cleanup";
import { ensureAppDevServer } from "@/lib/dev-servers";
import { AppError, NotFoundError } from "@/lib/errors";
import { autosaveRepositories, mirrorProjectRepository } from "@/lib/repository-mirror";
import { getSandboxProvider } from "@/lib/sandbox";
import { takeProjectScreenshots } from "@/lib/screenshots";
import { getStore } from "@/lib/store";
import { getProject, listAllProjectIds, type Project } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import { deleteProjectEverywhere } from "@/lib/workspace/delete-project";
import type { JobHandler, RunningJob } from "./port";

/** The service's long work, each a kind of job (and a pg-boss queue). */
export const JOB_KINDS = {
  bundleBuild: "bundle-build",
  screenshots: "screenshots",
  bundleCleanup: "bundle-cleanup",
  projectDelete: "project-delete",
  repositoryAutosave: "repository-autosave",
} as const;

async function projectOf(job: RunningJob): Promise<Project> {
  const project = job.input.projectId ? await getProject(await getStore(), job.input.projectId) : null;
  if (!project) throw new NotFoundError("The job's project no longer exists.", "project_not_found");
  return project;
}

/**
 * Builds, uploads and publishes the project's static bundles (iOS and Android unless the payload
 * names `platforms`) → `{ success: true, manifestUrl, bundleUrl, platforms, commitSha }`. A failed
 * export fails the job at once (422, the app does not build); a sandbox or blob store failure
 * (502) is retried.
 */
const buildBundle: JobHandler = async (job) => {
  const project = await projectOf(job);
  const sandbox = await openProjectSandbox(project);
  // What the build may commit is saved first; a failed mirror is recorded and does not stop the build.
  await mirrorProjectRepository(sandbox, project.id);
  const result = await buildProjectBundle(project, sandbox, job.input.payload as ProjectBuildRequest);
  if (!result.success) throw new AppError(result.status, result.code, result.error);
  return result;
};

/** Screenshots the project's preview → `{ mobileUrl, desktopUrl }`. */
const takeScreenshots: JobHandler = async (job) => {
  const project = await projectOf(job);
  // After a service restart nothing serves the preview until it is started again.
  const previewUrl = await ensureAppDevServer(await openProjectSandbox(project));
  return takeProjectScreenshots(project.id, previewUrl, { blob: getBlobStore() });
};

/** The daily cleanup of every project's old bundles (spec 8 defaults) → the cleanup summary. */
const cleanUpBundles: JobHandler = async () => cleanupBundles(getBlobStore(), await listAllProjectIds(await getStore()));

/** Finishes a project delete that failed part-way → `{ success: true }`; a project already gone is deleted. */
const deleteProjectLater: JobHandler = async (job) => {
  const project = job.input.projectId ? await getProject(await getStore(), job.input.projectId) : null;
  if (project) await deleteProjectEverywhere(project);
  return { success: true };
};

/** The repository autosave (REPOSITORY_AUTOSAVE_CRON): every project with a live sandbox is mirrored → the summary. */
const autosaveRepositoriesJob: JobHandler = async () => autosaveRepositories(getSandboxProvider());

export const JOB_HANDLERS: Record<string, JobHandler> = {
  [JOB_KINDS.bundleBuild]: buildBundle,
  [JOB_KINDS.screenshots]: takeScreenshots,
  [JOB_KINDS.bundleCleanup]: cleanUpBundles,
  [JOB_KINDS.projectDelete]: deleteProjectLater,
  [JOB_KINDS.repositoryAutosave]: autosaveRepositoriesJob,
};
