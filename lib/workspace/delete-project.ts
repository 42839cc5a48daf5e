import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { bundlePrefix } from "@/lib/bundles/paths";
import { mirrorBlobPrefix } from "@/lib/repository-mirror";
import { disconnectBackend } from "@/lib/cloud/disconnect";
import { ProvisioningInProgressError } from "@/lib/cloud/errors";
import { isAppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { getSandboxProvider, isSandboxError, SandboxNotFoundError } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { getCredentials } from "@/lib/store/credentials";
import { getRunningOperation } from "@/lib/store/operations";
import { deleteProject, type Project } from "@/lib/store/projects";

/** Every blob prefix a project owns (spec 2.9): its assets, its bundles, its two screenshots, its repository mirror. */
const projectBlobPrefixes = (project: Project) => [
  `${project.ownerId}/${project.id}/`,
  bundlePrefix(project.id),
  `screenshots/${project.id}-`,
  mirrorBlobPrefix(project.id),
];

/** Kills the project's sandbox; one already gone (killed, or lost in a crash) is what a kill wants. */
async function killSandboxOf(project: Project): Promise<void> {
  if (!project.sandboxId) return;
  await getSandboxProvider()
    .kill(project.sandboxId)
    .catch((error: unknown) => {
      if (!isSandboxError(error, SandboxNotFoundError)) throw error;
    });
}

/**
 * Removes a project and everything it holds elsewhere; refused (409) while a provisioning run is
 * live. Every step is idempotent and the row goes last, so a failed step leaves the project
 * listed, usable (a gone sandbox is replaced on next use) and deletable again:
 * - the sandbox is killed (first, so disconnecting has no dev server to stop or restart);
 * - the backend is disconnected, and a managed backend project deleted with it (a project on the
 *   user's own account is theirs: it is only disconnected);
 * - the project's blobs are deleted;
 * - the row goes, and the tables that reference it with it.
 */
export async function deleteProjectEverywhere(project: Project): Promise<void> {
  const db = await getStore();
  // Refused before anything is gone: disconnecting would refuse it only after the sandbox was killed.
  if (await getRunningOperation(db, project.id)) throw new ProvisioningInProgressError();
  await killSandboxOf(project);
  const credentials = await getCredentials(db, project.id);
  await disconnectBackend(project, { deleteBackendProject: credentials?.mode === "managed", sandboxGone: true });
  const blobs = getBlobStore();
  const stored = (await Promise.all(projectBlobPrefixes(project).map((prefix) => listAllBlobs(blobs, prefix)))).flat();
  if (stored.length > 0) await blobs.del(stored.map((blob) => blob.url));
  await deleteProject(db, project.id);
  log.info("project deleted", { projectId: project.id, blobs: stored.length, backendProjectDeleted: credentials?.mode === "managed" });
}

/**
 * DELETE /api/projects/<id>: deletes the project now → `{ deleted: true }`; when an upstream or
 * infrastructure fault stops it part-way, hands the rest to `retryLater` (a job that repeats the
 * delete with backoff) → `{ deleted: false, retry }`. Refusals (4xx) are thrown as they are.
 */
export async function deleteProjectOrRetryLater<T>(
  project: Project,
  retryLater: () => Promise<T>,
): Promise<{ deleted: true } | { deleted: false; retry: T }> {
  try {
    await deleteProjectEverywhere(project);
    return { deleted: true };
  } catch (error) {
    if (isAppError(error) && error.status < 500) throw error;
    log.warn("project delete failed part-way; retrying it in a job", { projectId: project.id, error });
    return { deleted: false, retry: await retryLater() };
  }
}
