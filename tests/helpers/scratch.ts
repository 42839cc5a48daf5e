import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AppToolchain, npmCacheDir, sandboxCacheHome } from "@/lib/toolchain";

/** Where the suite's scratch data goes when the machine has a memory file system with room. */
const MEMORY_FS = "/dev/shm";
/** Free space the memory file system needs: a toolchain copy (about 450 MB) and the runs' data dirs. */
const MEMORY_FS_MIN_FREE_BYTES = 4 * 1024 ** 3;
const SCRATCH_NAME = "cloud-backend-service-tests";

const exec = promisify(execFile);

function hasRoom(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    const stats = fs.statfsSync(dir);
    return stats.bavail * stats.bsize >= MEMORY_FS_MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

/**
 * The directory the suite's data directories, sandboxes and temp files live in (its `tmp/`, the
 * TMPDIR of the test files). Every test file
 * creates sandboxes (tens of thousands of hard links each), an embedded database and caches, and
 * removes them again: on a disk that is mostly journal and writeback work, which a memory file
 * system skips (the suite's system CPU time drops by about two thirds). The code under test is the
 * same; only the medium differs. Falls back to the OS temp directory without one.
 */
export function suiteScratchDir(): string {
  const dir = path.join(hasRoom(MEMORY_FS) ? MEMORY_FS : os.tmpdir(), SCRATCH_NAME);
  fs.mkdirSync(path.join(dir, "tmp"), { recursive: true });
  return dir;
}

/**
 * Removes a directory tree with `rm -rf`: a data directory may still hold sandboxes, tens of
 * thousands of hard links each, which Node's recursive removal takes several times the CPU for.
 */
export function removeTreeSync(dir: string): void {
  execFileSync("rm", ["-rf", "--", dir]);
}

const sameFileSystem = (a: string, b: string) => fs.statSync(a).dev === fs.statSync(b).dev;

/**
 * A toolchain directory (APP_TOOLCHAIN_DIR) on the scratch directory's file system, since
 * sandboxes hard-link the prepared toolchain and links cannot cross file systems. The prepared
 * toolchain at `root` is copied once and reused while its key (the directory name) stays the
 * same; copies of other keys are removed. The npm and Metro caches stay those of `root`'s
 * directory, through symbolic links, so they keep what earlier runs downloaded and built.
 */
export async function toolchainDirBeside(scratchDir: string, templateRoot: string, root: string): Promise<string> {
  const persistent = { dir: path.dirname(root) };
  if (sameFileSystem(scratchDir, persistent.dir)) return persistent.dir;
  const mirrored = { dir: path.join(scratchDir, "app-toolchain") };
  const name = path.basename(root);
  const mirror = path.join(mirrored.dir, name);
  fs.mkdirSync(mirrored.dir, { recursive: true });
  const caches = [npmCacheDir, sandboxCacheHome];
  const keep = new Set([name, ...caches.map((cache) => path.basename(cache(mirrored)))]);
  for (const entry of fs.readdirSync(mirrored.dir)) {
    // Another run's copy in progress (`<name>.<pid>`) is left alone.
    if (!keep.has(entry) && !entry.startsWith(`${name}.`)) fs.rmSync(path.join(mirrored.dir, entry), { recursive: true, force: true });
  }
  for (const cache of caches) {
    fs.mkdirSync(cache(persistent), { recursive: true });
    if (!fs.existsSync(cache(mirrored))) fs.symlinkSync(cache(persistent), cache(mirrored));
  }
  if (!(await new AppToolchain(mirrored).isReady(templateRoot))) {
    // Copied aside and renamed into place: a run beside this one sees the whole copy or none.
    const draft = `${mirror}.${process.pid}`;
    await exec("cp", ["-a", root, draft]);
    try {
      fs.renameSync(draft, mirror);
    } catch {
      // The other run's copy got there first.
      fs.rmSync(draft, { recursive: true, force: true });
    }
  }
  return mirrored.dir;
}
