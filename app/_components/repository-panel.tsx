import type { ApiRepository } from "@/lib/api-contract/types";

const when = (iso: string) => new Date(iso).toUTCString();
const shortCommit = (sha: string) => sha.slice(0, 12);

/**
 * Where the app's code is safe outside its sandbox (GET /api/projects/<id>/repository): the
 * newest mirror, a failed attempt since, and what the last rebuild of a lost sandbox restored.
 */
export function RepositoryPanel({ status }: { status: ApiRepository }) {
  const { mirror, lastFailure, lastRestore } = status;
  return (
    <section className="card stack" aria-labelledby="repository-heading">
      <h2 id="repository-heading">Code backup</h2>
      {mirror ? (
        <p className="small" data-testid="repository-mirror">
          Last saved {when(mirror.mirroredAt)}: commit {shortCommit(mirror.headCommit)}
          {mirror.branch ? ` on ${mirror.branch}` : ""}
          {mirror.workingTreeSaved ? ", with uncommitted changes" : ""} ({Math.ceil(mirror.sizeBytes / 1024)} KiB).
        </p>
      ) : (
        <p className="small">Not saved outside the sandbox yet.</p>
      )}
      {lastFailure && (
        <p className="small" role="status">
          The last save failed ({when(lastFailure.at)}): {lastFailure.message}
        </p>
      )}
      {lastRestore && (
        <p className="small" data-testid="repository-restore">
          The sandbox was rebuilt {when(lastRestore.restoredAt)} from the save of {when(lastRestore.mirroredAt)}: commit{" "}
          {shortCommit(lastRestore.headCommit)}
          {lastRestore.workingTreeRestored ? " and the uncommitted changes" : ""}.
        </p>
      )}
    </section>
  );
}
