import crypto from "node:crypto";
import type { ApiRepository } from "@/lib/api-contract/types";
import { type BlobStore, getBlobStore } from "@/lib/blob";
import { log, redactSecrets } from "@/lib/log";
import { APP_DIR, isSandboxError, SANDBOX_HOME, SandboxNotFoundError, type Sandbox, type SandboxProvider } from "@/lib/sandbox";
import { getStore, type SqlExecutor } from "@/lib/store";
import { listProjectSandboxes } from "@/lib/store/projects";
import {
  clearRepositoryMirrorFailure,
  getRepositoryMirror,
  recordRepositoryMirror,
  recordRepositoryMirrorFailure,
  recordRepositoryRestore,
  type RepositoryMirrorRecord,
} from "@/lib/store/repository-mirrors";
import { openMirror, sealMirror } from "./cipher";

/**
 * The app repository kept outside its sandbox: an encrypted git bundle of every ref, plus the
 * working tree as a commit on `refs/mirror/wip` (made with a separate index, so the user's
 * branch, index and files are untouched), stored in the blob store under
 * `repository-mirrors/<project>/`. A lost sandbox is rebuilt from it.
 */

/** The ref holding the working tree (committed or not) at the time of the mirror. */
export const WIP_REF = "refs/mirror/wip";
const WORK_DIR = `${SANDBOX_HOME}/.repository-mirror`;
const GIT_TIMEOUT_MS = 120_000;

/** Where a project's mirrors live in the blob store (never linked anywhere; sealed, see cipher.ts). */
export const mirrorBlobPrefix = (projectId: string) => `repository-mirrors/${projectId}/`;

export interface MirrorOptions {
  /** @defaultValue getBlobStore() */
  blob?: BlobStore;
  db?: SqlExecutor;
  /** Attempts before a failure is recorded. @defaultValue 3 */
  attempts?: number;
  /** Pause before the second attempt; doubles after. @defaultValue 500 */
  retryDelayMs?: number;
}

export type MirrorOutcome = { status: "mirrored"; headCommit: string; sizeBytes: number } | { status: "unchanged" } | { status: "failed"; error: string };

/**
 * Writes the working tree as a commit on {@link WIP_REF} (removed when it matches HEAD) and
 * answers `<head> <tree> <wip|-> <branch|->`. A temporary index keeps the user's index as it was.
 */
const SNAPSHOT_SCRIPT = [
  "set -e",
  'head=$(git rev-parse --verify -q HEAD^{commit})',
  'export GIT_INDEX_FILE="$PWD/.git/mirror-index"',
  'rm -f "$GIT_INDEX_FILE"',
  "git read-tree HEAD",
  "git add -A",
  "tree=$(git write-tree)",
  'rm -f "$GIT_INDEX_FILE"',
  "unset GIT_INDEX_FILE",
  'if [ "$tree" = "$(git rev-parse HEAD^{tree})" ]; then',
  `  git update-ref -d ${WIP_REF}; wip=-`,
  "else",
  '  wip=$(git commit-tree "$tree" -p HEAD -m "Working tree saved by the service (not on any branch)")',
  `  git update-ref ${WIP_REF} "$wip"`,
  "fi",
  'branch=$(git symbolic-ref -q --short HEAD || echo -)',
  'echo "$head $tree $wip $branch"',
].join("\n");

interface Snapshot {
  headCommit: string;
  tree: string;
  wipCommit: string | null;
  branch: string | null;
}

async function snapshotWorkingTree(sandbox: Sandbox): Promise<Snapshot> {
  const { stdout } = await sandbox.commands.run(SNAPSHOT_SCRIPT, { cwd: APP_DIR, timeoutMs: GIT_TIMEOUT_MS });
  const [headCommit, tree, wip, branch] = stdout.trim().split(/\s+/);
  if (!headCommit || !tree) throw new Error(`Unexpected snapshot answer ${JSON.stringify(stdout.slice(0, 200))}.`);
  return { headCommit, tree, wipCommit: wip === "-" ? null : wip, branch: branch === "-" ? null : branch };
}

async function readBlobBytes(blob: BlobStore, pathname: string): Promise<Uint8Array | null> {
  const found = await blob.get(pathname);
  return found ? new Uint8Array(await new Response(found.stream).arrayBuffer()) : null;
}

/** One mirror attempt: snapshot, bundle, seal, store, record; the replaced mirror's blob is deleted. */
async function mirrorOnce(sandbox: Sandbox, projectId: string, blob: BlobStore, db: SqlExecutor): Promise<MirrorOutcome> {
  const snapshot = await snapshotWorkingTree(sandbox);
  const fingerprint = `${snapshot.headCommit}:${snapshot.tree}:${snapshot.branch ?? ""}`;
  const stored = await getRepositoryMirror(db, projectId);
  if (stored?.fingerprint === fingerprint && stored.blobPathname && (await blob.head(stored.blobPathname))) {
    if (stored.lastError) await clearRepositoryMirrorFailure(db, projectId);
    return { status: "unchanged" };
  }

  const file = `${WORK_DIR}/${crypto.randomUUID()}.bundle`;
  try {
    await sandbox.commands.run(`mkdir -p ${WORK_DIR} && git bundle create -q ${file} --all`, { cwd: APP_DIR, timeoutMs: GIT_TIMEOUT_MS });
    const sealed = sealMirror(await sandbox.files.read(file, { format: "bytes" }), projectId);
    const put = await blob.put(`${mirrorBlobPrefix(projectId)}${snapshot.headCommit}.bundle`, sealed, {
      access: "public",
      addRandomSuffix: true,
      contentType: "application/octet-stream",
    });
    const replaced = await recordRepositoryMirror(db, {
      projectId,
      blobPathname: put.pathname,
      headCommit: snapshot.headCommit,
      branch: snapshot.branch,
      wipCommit: snapshot.wipCommit,
      fingerprint,
      sizeBytes: sealed.byteLength,
    });
    if (replaced) await blob.del(replaced).catch((error: unknown) => log.warn("an old repository mirror was not deleted", { projectId, error }));
    return { status: "mirrored", headCommit: snapshot.headCommit, sizeBytes: sealed.byteLength };
  } finally {
    await sandbox.files.remove(file).catch(() => undefined);
  }
}

/**
 * Mirrors the project's app repository (every ref and the working tree) to the blob store;
 * `unchanged` when the newest mirror already holds this state. Never throws: a failure is
 * retried, then recorded on the project (GET /api/projects/<id>/repository) and logged, so it
 * never stops the step that asked for it.
 */
export async function mirrorProjectRepository(sandbox: Sandbox, projectId: string, options: MirrorOptions = {}): Promise<MirrorOutcome> {
  const attempts = options.attempts ?? 3;
  let delay = options.retryDelayMs ?? 500;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await mirrorOnce(sandbox, projectId, options.blob ?? getBlobStore(), options.db ?? (await getStore()));
    } catch (error) {
      lastError = error;
      if (isSandboxError(error, SandboxNotFoundError)) break;
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, delay));
      delay *= 2;
    }
  }
  const message = redactSecrets(lastError instanceof Error ? lastError.message : String(lastError)).slice(0, 1000);
  log.warn("the app repository was not mirrored", { projectId, sandboxId: sandbox.sandboxId, error: message });
  await recordRepositoryMirrorFailure(options.db ?? (await getStore()), projectId, message).catch((error: unknown) =>
    log.warn("a repository mirror failure was not recorded", { projectId, error }),
  );
  return { status: "failed", error: message };
}

/**
 * Replaces the app repository of a new sandbox with the project's newest mirror: its refs, its
 * branch checked out at its commit, and the working tree it saved on top (left uncommitted,
 * as it was). Template files the app's commit lacks go; `node_modules` stays.
 */
function restoreScript(bundle: string, mirror: RepositoryMirrorRecord): string {
  const checkout = mirror.branch ? `git checkout -q -f ${JSON.stringify(mirror.branch)}` : `git checkout -q -f --detach ${mirror.headCommit}`;
  return [
    "set -e",
    `git fetch -q --update-head-ok --force ${bundle} 'refs/*:refs/*'`,
    checkout,
    `git reset -q --hard ${mirror.headCommit}`,
    "git clean -q -f -d -x -e node_modules",
    ...(mirror.wipCommit
      ? [
          `git checkout -q ${mirror.wipCommit} -- .`,
          `git diff --name-only -z --diff-filter=D HEAD ${mirror.wipCommit} | xargs -0 -r rm -f --`,
          "git reset -q",
        ]
      : []),
  ].join("\n");
}

export type RestoreOutcome =
  | { status: "restored"; mirroredAt: Date; headCommit: string; workingTree: boolean }
  | { status: "none" }
  | { status: "failed"; error: string };

/**
 * Rebuilds a lost sandbox's app repository from the project's newest mirror (nothing to do
 * without one) and records what it restored. A failure is logged and answered, never thrown:
 * the new sandbox then holds the template app.
 */
export async function restoreProjectRepository(sandbox: Sandbox, projectId: string, options: Pick<MirrorOptions, "blob" | "db"> = {}): Promise<RestoreOutcome> {
  const db = options.db ?? (await getStore());
  const mirror = await getRepositoryMirror(db, projectId);
  if (!mirror?.blobPathname || !mirror.headCommit || !mirror.mirroredAt) return { status: "none" };
  const file = `${WORK_DIR}/${crypto.randomUUID()}.bundle`;
  try {
    const sealed = await readBlobBytes(options.blob ?? getBlobStore(), mirror.blobPathname);
    if (!sealed) throw new Error(`The mirror ${mirror.blobPathname} is missing from the blob store.`);
    await sandbox.files.write(file, openMirror(sealed, projectId));
    await sandbox.commands.run(restoreScript(file, mirror), { cwd: APP_DIR, timeoutMs: GIT_TIMEOUT_MS });
    const restored = { mirroredAt: mirror.mirroredAt, headCommit: mirror.headCommit, workingTree: mirror.wipCommit !== null };
    await recordRepositoryRestore(db, { projectId, ...restored });
    log.info("a lost sandbox's app repository was restored from its mirror", { projectId, sandboxId: sandbox.sandboxId, ...restored });
    return { status: "restored", ...restored };
  } catch (error) {
    const message = redactSecrets(error instanceof Error ? error.message : String(error)).slice(0, 1000);
    log.warn("the app repository was not restored from its mirror", { projectId, sandboxId: sandbox.sandboxId, error: message });
    return { status: "failed", error: message };
  } finally {
    await sandbox.files.remove(file).catch(() => undefined);
  }
}

/**
 * The autosave job: mirrors every project whose sandbox still exists (a gone sandbox is skipped,
 * never created) → how many were mirrored, unchanged, failed and skipped.
 */
export async function autosaveRepositories(provider: SandboxProvider, options: Pick<MirrorOptions, "blob" | "db"> = {}) {
  const db = options.db ?? (await getStore());
  const summary = { mirrored: 0, unchanged: 0, failed: 0, skipped: 0 };
  for (const { projectId, sandboxId } of await listProjectSandboxes(db)) {
    let sandbox: Sandbox;
    try {
      sandbox = await provider.connect(sandboxId);
    } catch (error) {
      if (!isSandboxError(error, SandboxNotFoundError)) log.warn("autosave could not reach a sandbox", { projectId, sandboxId, error });
      summary.skipped++;
      continue;
    }
    summary[(await mirrorProjectRepository(sandbox, projectId, { ...options, db })).status]++;
  }
  return summary;
}

/** GET /api/projects/<id>/repository and the project page: the newest mirror, the last failure, the last restore. */
export async function readRepositoryStatus(projectId: string, db?: SqlExecutor): Promise<ApiRepository> {
  const record = await getRepositoryMirror(db ?? (await getStore()), projectId);
  const iso = (date: Date) => date.toISOString();
  return {
    mirror:
      record?.mirroredAt && record.headCommit
        ? { mirroredAt: iso(record.mirroredAt), headCommit: record.headCommit, branch: record.branch, workingTreeSaved: record.wipCommit !== null, sizeBytes: record.sizeBytes ?? 0 }
        : null,
    lastFailure: record?.lastError && record.lastErrorAt ? { at: iso(record.lastErrorAt), message: record.lastError } : null,
    lastRestore:
      record?.restoredAt && record.restoredMirroredAt && record.restoredHeadCommit
        ? {
            restoredAt: iso(record.restoredAt),
            mirroredAt: iso(record.restoredMirroredAt),
            headCommit: record.restoredHeadCommit,
            workingTreeRestored: record.restoredWorkingTree ?? false,
          }
        : null,
  };
}
