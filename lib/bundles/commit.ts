import { z } from "zod";
import { BadRequestError, ConflictError, NotFoundError } from "@/lib/errors";
import { APP_DIR, CommandExitError, isSandboxError, type Sandbox } from "@/lib/sandbox";

/**
 * A git commit id as it appears in bundle paths: 7 to 64 hex digits (abbreviated, SHA-1 or
 * SHA-256), stored lower-case. Nothing else may reach `bundles/<project>/<commit>/`.
 */
export const commitShaSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{7,64}$/, "must be a git commit id (7 to 64 hex digits)")
  .transform((sha) => sha.toLowerCase());

/** A commit id normalised by {@link commitShaSchema}; `BadRequestError` when it is not one. */
export function parseCommitSha(sha: string): string {
  const parsed = commitShaSchema.safeParse(sha);
  if (!parsed.success) throw new BadRequestError(`commitSha ${parsed.error.issues[0].message}.`, "invalid_commit");
  return parsed.data;
}

export interface CommitInfo {
  sha: string;
  message: string;
}

/** The app repository's HEAD commit (`git log -1`): full id and message. */
export async function readHeadCommit(sandbox: Sandbox): Promise<CommitInfo> {
  try {
    // NUL cannot occur in a commit id or message, so it separates them safely.
    const { stdout } = await sandbox.commands.run("git log -1 --format=%H%x00%B", { cwd: APP_DIR, timeoutMs: 30_000 });
    const [sha, message = ""] = stdout.split("\0");
    return { sha: parseCommitSha(sha.trim()), message: message.trim() };
  } catch (error) {
    if (isSandboxError(error, CommandExitError)) {
      throw new ConflictError("The app repository has no commit to build; commit the app first or pass commitSha.", "no_commit");
    }
    throw error;
  }
}

/** The full id of a commit of the app repository; 404 `commit_not_found` when it has none such. */
export async function verifyCommit(sandbox: Sandbox, sha: string): Promise<string> {
  const normalized = parseCommitSha(sha);
  try {
    const { stdout } = await sandbox.commands.run(`git rev-parse --verify --quiet ${normalized}^{commit}`, { cwd: APP_DIR, timeoutMs: 30_000 });
    return parseCommitSha(stdout.trim());
  } catch (error) {
    if (isSandboxError(error, CommandExitError)) throw new NotFoundError(`The app repository has no commit ${normalized}.`, "commit_not_found");
    throw error;
  }
}

/**
 * The commit a build is made of and labelled with: the given id (which must exist; stored as
 * its full id), else HEAD. A given message wins; without one, HEAD's message goes with HEAD and
 * an explicit id gets none.
 */
export async function resolveCommit(sandbox: Sandbox, requested: { commitSha?: string; commitMessage?: string }): Promise<CommitInfo> {
  if (requested.commitSha !== undefined) {
    return { sha: await verifyCommit(sandbox, requested.commitSha), message: requested.commitMessage ?? "" };
  }
  const head = await readHeadCommit(sandbox);
  return { sha: head.sha, message: requested.commitMessage ?? head.message };
}

/** The message of the commit a bundle request without a commit makes of the working tree. */
export const WORKING_TREE_COMMIT_MESSAGE = "Commit the working tree to build a bundle of what the preview shows";

/** Whether the working tree has changes git would commit (tracked edits, new files not ignored). */
async function hasUncommittedChanges(sandbox: Sandbox): Promise<boolean> {
  const { stdout } = await sandbox.commands.run("git status --porcelain --untracked-files=all", { cwd: APP_DIR, timeoutMs: 30_000 });
  return stdout.trim() !== "";
}

/**
 * Commits every change of the working tree (ignored files aside) on the current branch, so a
 * build's commit id names exactly what the preview shows; `false` when there was nothing to commit.
 * Hooks are skipped: an AI-written hook must not decide whether the bundle is built.
 */
export async function commitWorkingTree(sandbox: Sandbox): Promise<boolean> {
  if (!(await hasUncommittedChanges(sandbox))) return false;
  await sandbox.commands.run(`git add -A && git commit -q --no-verify -m ${JSON.stringify(WORKING_TREE_COMMIT_MESSAGE)}`, {
    cwd: APP_DIR,
    timeoutMs: 60_000,
  });
  return true;
}

/**
 * Whether the working tree differs from commit `sha`: a tracked file's content, or a new file
 * that is not ignored. Reads only; the index and branch stay as they are.
 */
export async function workingTreeDiffersFrom(sandbox: Sandbox, sha: string): Promise<boolean> {
  const { stdout } = await sandbox.commands.run(
    `if git diff --quiet ${parseCommitSha(sha)} --; then git ls-files --others --exclude-standard | head -n 1; else echo changed; fi`,
    { cwd: APP_DIR, timeoutMs: 30_000 },
  );
  return stdout.trim() !== "";
}
