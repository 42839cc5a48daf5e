import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { bundlePrefix } from "@/lib/bundles/paths";
import { disconnectBackend } from "@/lib/cloud/disconnect";
import { ProvisioningInProgressError } from "@/lib/cloud/errors";
import { log } from "@/lib/log";
import { getSandboxProvider } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { getCredentials } from "@/lib/store/credentials";
import { getRunningOperation } from "@/lib/store/operations";
import { deleteProject, type Project } from "@/lib/store/projects";

/** Every blob prefix a project owns (spec 2.9): its assets, its bundles, its two screenshots. */
const projectBlobPrefixes = (project: Project) => [`${project.ownerId}/${project.id}/`, bundlePrefix(project.id), `screenshots/${project.id}-`];

/**
 * DELETE /api/projects/<id>: removes a project and everything it holds elsewhere; refused (409)
 * while a provisioning run is live. In order, so a failed step leaves the project listed and the
 * call can simply be repeated:
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
  if (project.sandboxId) await getSandboxProvider().kill(project.sandboxId);
  const credentials = await getCredentials(db, project.id);
  await disconnectBackend(project, { deleteBackendProject: credentials?.mode === "managed" });
  const blobs = getBlobStore();
  const stored = (await Promise.all(projectBlobPrefixes(project).map((prefix) => listAllBlobs(blobs, prefix)))).flat();
  if (stored.length > 0) await blobs.del(stored.map((blob) => blob.url));
  await deleteProject(db, project.id);
  log.info("project deleted", { projectId: project.id, blobs: stored.length, backendProjectDeleted: credentials?.mode === "managed" });
}
