import { readFileSync, rmSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import { AppError } from "@/lib/errors";
import { processSingleton } from "@/lib/singletons";

/** Who holds an embedded database directory: written into its lock file, read by whoever is refused. */
export interface DatabaseLockHolder {
  pid: number;
  hostname: string;
  /** The holder's command line, shortened: tells a server from a CLI in the refusal. */
  command: string;
  /** The holder's PUBLIC_BASE_URL: a CLI reaches a server holding the database through its API there. */
  baseUrl?: string;
  since: string;
}

/** Thrown when another live process holds the embedded database directory. */
export class DatabaseLockedError extends AppError {
  constructor(
    readonly lockFile: string,
    readonly holder: DatabaseLockHolder,
  ) {
    super(
      503,
      "database_locked",
      `The embedded database is in use by another process (pid ${holder.pid} on ${holder.hostname}, \`${holder.command}\`, ` +
        `since ${holder.since}${holder.baseUrl ? `, serving ${holder.baseUrl}` : ""}). Only one process may open it at a time: stop that process ` +
        `(or, for the CLIs, let them reach that server's API), or set DATABASE_URL to share a PostgreSQL database. ` +
        `If no such process runs, delete ${lockFile}.`,
    );
  }
}

/** The lock file of an embedded database directory: beside it, so the database's own files stay untouched. */
export const lockFileOf = (dataDir: string) => `${dataDir}.lock`;

// A process killed while breaking a stale lock leaves the breaker behind; after this it is stale too.
const BREAKER_STALE_MS = 10_000;

/** Lock files this process holds, shared by every bundle Next.js loads. */
const heldLocks = () => processSingleton("heldDatabaseLocks", () => new Set<string>());

function isAlive(lockFile: string, holder: DatabaseLockHolder): boolean {
  // A lock of another host (a shared volume) cannot be checked: it counts as held.
  if (holder.hostname !== os.hostname()) return true;
  // Our own pid: held when this process took it; otherwise a previous boot's (a container restart reuses pids).
  if (holder.pid === process.pid) return heldLocks().has(lockFile);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return !isZombie(holder.pid);
}

/** A killed process not yet reaped (its parent died too, and PID 1 of a container may never reap) still answers signal 0. */
function isZombie(pid: number): boolean {
  try {
    // Linux: the state letter follows the parenthesised command name.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
}

async function readHolder(lockFile: string): Promise<DatabaseLockHolder | null> {
  try {
    return JSON.parse(await fs.readFile(lockFile, "utf8")) as DatabaseLockHolder;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Missing, or unreadable (the file is linked in whole, so only a damaged disk tears it).
    if (code === "ENOENT" || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** The live process holding `dataDir`, or null when it is free (no lock, or its holder died). */
export async function readDatabaseLock(dataDir: string): Promise<DatabaseLockHolder | null> {
  const lockFile = lockFileOf(dataDir);
  const holder = await readHolder(lockFile);
  return holder && isAlive(lockFile, holder) ? holder : null;
}

/**
 * Removes a dead holder's lock. Two processes may find the same stale lock: a short-lived
 * breaker file (O_EXCL) lets only one of them remove it, after checking it is still the dead one.
 */
async function breakStaleLock(lockFile: string, stale: DatabaseLockHolder | null): Promise<void> {
  const breaker = `${lockFile}.break`;
  const age = await fs.stat(breaker).then((stat) => Date.now() - stat.mtimeMs, () => null);
  if (age !== null && age > BREAKER_STALE_MS) await fs.rm(breaker, { force: true });
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(breaker, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  try {
    const current = await readHolder(lockFile);
    if (JSON.stringify(current) === JSON.stringify(stale)) await fs.rm(lockFile, { force: true });
  } finally {
    await handle.close();
    await fs.rm(breaker, { force: true });
  }
}

/**
 * Takes the exclusive lock on an embedded database directory for this process, or throws
 * DatabaseLockedError naming the live holder. A lock left by a dead process (SIGKILL, power loss)
 * is taken over. Returns the release; the lock is also dropped when the process exits normally.
 */
export async function lockDatabaseDirectory(dataDir: string, baseUrl?: string): Promise<() => Promise<void>> {
  const lockFile = lockFileOf(dataDir);
  const mine: DatabaseLockHolder = {
    pid: process.pid,
    hostname: os.hostname(),
    command: process.argv.slice(1).join(" ").slice(0, 200),
    ...(baseUrl && { baseUrl }),
    since: new Date().toISOString(),
  };
  // Written aside, then linked into place: the lock file appears atomically, complete or not at all.
  const draft = `${lockFile}.${process.pid}`;
  await fs.writeFile(draft, JSON.stringify(mine), { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await fs.link(draft, lockFile);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = await readHolder(lockFile);
      if (holder && isAlive(lockFile, holder)) throw new DatabaseLockedError(lockFile, holder);
      if (attempt >= 3) throw new DatabaseLockedError(lockFile, holder ?? { ...mine, pid: 0, command: "(unreadable lock file)" });
      await breakStaleLock(lockFile, holder);
    }
  } finally {
    await fs.rm(draft, { force: true });
  }
  heldLocks().add(lockFile);
  const releaseOnExit = () => rmSync(lockFile, { force: true });
  process.once("exit", releaseOnExit);
  return async () => {
    process.off("exit", releaseOnExit);
    heldLocks().delete(lockFile);
    if ((await readHolder(lockFile))?.pid === process.pid) await fs.rm(lockFile, { force: true });
  };
}
