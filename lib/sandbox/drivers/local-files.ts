import crypto from "node:crypto";
import { constants, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { FileNotFoundError, InvalidArgumentError } from "../errors";
import { SANDBOX_HOME, type EntryInfo, type EntryType, type FileData, type SandboxFiles, type WriteEntry, type WriteInfo } from "../port";
import { removeTree } from "./local-command-host";
import type { SandboxPaths } from "./local-paths";

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

const entryType = (stat: Stats): EntryType => (stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "dir" : "file");

const toBytes = (data: FileData): Uint8Array =>
  typeof data === "string" ? Buffer.from(data, "utf8") : data instanceof Uint8Array ? data : new Uint8Array(data);

/** Runs a filesystem call, turning "missing" errors into the port's FileNotFoundError. */
async function orNotFound<T>(sandboxPath: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") throw new FileNotFoundError(sandboxPath);
    if (errorCode(error) === "EISDIR") throw new InvalidArgumentError(`${sandboxPath} is a directory.`);
    if (errorCode(error) === "EEXIST") throw new InvalidArgumentError(`A parent of ${sandboxPath} is not a directory.`);
    throw error;
  }
}

/**
 * `sandbox.files` of the local driver: plain filesystem calls on checked host paths. A written
 * file replaces the old one whole: its bytes go to a draft beside the sandbox's home, which is
 * renamed into place, so a process killed mid-write leaves the old file rather than a truncated
 * one (a package.json cut short breaks the app), and a file hard-linked from the app toolchain is
 * replaced, never changed in place under every other sandbox.
 */
export class LocalFiles implements SandboxFiles {
  /** Outside the home directory (invisible to the app and its git), on the same file system. */
  private readonly draftsDir: string;

  constructor(private readonly paths: SandboxPaths) {
    this.draftsDir = path.join(path.dirname(paths.hostHome), "drafts");
  }

  read(path: string, options?: { format?: "text" }): Promise<string>;
  read(path: string, options: { format: "bytes" }): Promise<Uint8Array>;
  async read(sandboxPath: string, options?: { format?: "text" | "bytes" }): Promise<string | Uint8Array> {
    const hostPath = await this.paths.resolve(sandboxPath);
    const bytes = await orNotFound(sandboxPath, () => fs.readFile(hostPath));
    return options?.format === "bytes" ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes.toString("utf8");
  }

  write(path: string, data: FileData): Promise<WriteInfo>;
  write(entries: WriteEntry[]): Promise<WriteInfo[]>;
  async write(target: string | WriteEntry[], data?: FileData): Promise<WriteInfo | WriteInfo[]> {
    if (Array.isArray(target)) {
      const written: WriteInfo[] = [];
      for (const entry of target) written.push(await this.writeBytes(entry.path, entry.data));
      return written;
    }
    if (data === undefined) throw new InvalidArgumentError("files.write needs data to write.");
    return this.writeBytes(target, data);
  }

  async list(sandboxPath: string, options: { depth?: number } = {}): Promise<EntryInfo[]> {
    const depth = options.depth ?? 1;
    if (!Number.isInteger(depth) || depth < 1) throw new InvalidArgumentError("depth must be an integer of at least 1.");
    const hostDir = await this.paths.resolve(sandboxPath);
    const stat = await orNotFound(sandboxPath, () => fs.stat(hostDir));
    if (!stat.isDirectory()) throw new InvalidArgumentError(`${sandboxPath} is not a directory.`);
    return this.listTree(hostDir, depth);
  }

  async exists(sandboxPath: string): Promise<boolean> {
    const hostPath = await this.paths.resolve(sandboxPath);
    return fs.stat(hostPath).then(
      () => true,
      () => false,
    );
  }

  async makeDir(sandboxPath: string): Promise<boolean> {
    const hostPath = await this.paths.resolve(sandboxPath);
    if (await this.exists(sandboxPath)) return false;
    await fs.mkdir(hostPath, { recursive: true });
    return true;
  }

  async remove(sandboxPath: string): Promise<void> {
    if (this.paths.normalize(sandboxPath) === SANDBOX_HOME) {
      throw new InvalidArgumentError("The sandbox home directory itself cannot be removed.");
    }
    const hostPath = await this.paths.resolve(sandboxPath, { followLast: false });
    const stats = await fs.lstat(hostPath).catch(() => null);
    if (!stats?.isDirectory()) return fs.rm(hostPath, { force: true });
    // An empty directory (an asset upload's staging directory once committed) goes without
    // starting a process; any other (a whole node_modules, say) with `rm -rf`, which takes a
    // fraction of the CPU time of removing it from here.
    if (await fs.rmdir(hostPath).then(() => true, () => false)) return;
    await removeTree(hostPath);
  }

  /**
   * A copy, never a hard link: the app may rewrite the file in place, which must not change the
   * source (a blob). Copy-on-write filesystems clone it without writing the bytes again.
   */
  async copyFromHost(sandboxPath: string, sourcePath: string): Promise<WriteInfo> {
    return this.writeOne(sandboxPath, (hostPath) => fs.copyFile(sourcePath, hostPath, constants.COPYFILE_FICLONE));
  }

  async rename(oldPath: string, newPath: string): Promise<WriteInfo> {
    // Links are renamed themselves, never followed, like `mv`.
    const from = await this.paths.resolve(oldPath, { followLast: false });
    const to = await this.paths.resolve(newPath, { followLast: false });
    const stat = await orNotFound(oldPath, async () => {
      await fs.rename(from, to);
      return fs.lstat(to);
    });
    return { name: path.basename(to), path: this.paths.toSandbox(to), type: entryType(stat) };
  }

  private writeBytes(sandboxPath: string, data: FileData): Promise<WriteInfo> {
    return this.writeOne(sandboxPath, (hostPath) => fs.writeFile(hostPath, toBytes(data)));
  }

  private async writeOne(sandboxPath: string, writeFile: (hostPath: string) => Promise<void>): Promise<WriteInfo> {
    const hostPath = await this.paths.resolve(sandboxPath);
    await orNotFound(sandboxPath, async () => {
      await fs.mkdir(path.dirname(hostPath), { recursive: true });
      await fs.mkdir(this.draftsDir, { recursive: true });
      const draft = path.join(this.draftsDir, crypto.randomUUID());
      try {
        await writeFile(draft);
        // A replaced file keeps its permissions (an executable script stays executable).
        const replaced = await fs.stat(hostPath).catch(() => null);
        if (replaced?.isFile()) await fs.chmod(draft, replaced.mode & 0o7777);
        await fs.rename(draft, hostPath);
      } catch (error) {
        await fs.rm(draft, { force: true });
        throw error;
      }
    });
    return { name: path.basename(hostPath), path: this.paths.toSandbox(hostPath), type: "file" };
  }

  private async listTree(hostDir: string, depth: number): Promise<EntryInfo[]> {
    const entries: EntryInfo[] = [];
    const names = (await fs.readdir(hostDir)).sort();
    for (const name of names) {
      const hostPath = path.join(hostDir, name);
      const stat = await fs.lstat(hostPath).catch(() => null);
      if (!stat) continue; // removed while listing
      entries.push({
        name,
        path: this.paths.toSandbox(hostPath),
        type: entryType(stat),
        size: stat.size,
        modifiedTime: stat.mtime,
      });
      if (depth > 1 && stat.isDirectory()) entries.push(...(await this.listTree(hostPath, depth - 1)));
    }
    return entries;
  }
}
