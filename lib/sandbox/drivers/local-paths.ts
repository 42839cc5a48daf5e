import fs from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError, PathOutsideSandboxError } from "../errors";
import { SANDBOX_HOME } from "../port";

/** `/home/user` as a whole path segment: not `/home/username`, not `/home/user.bak`. */
const HOME_IN_TEXT = /\/home\/user(?![\w.-])/g;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Maps sandbox paths (`/home/user/...`) to a host directory and back. Every path the files API
 * touches goes through {@link resolve}, which refuses anything that ends up outside the home
 * directory, lexically (`..`, other absolute paths) or through symlinks.
 */
export class SandboxPaths {
  /**
   * @param hostHome real (symlink-free) absolute host path playing the role of `/home/user`.
   * @param commandHome the same directory as commands see it: a path safe to paste unquoted into
   *   shell text (an alias when `hostHome` holds spaces). @default hostHome
   */
  constructor(
    readonly hostHome: string,
    readonly commandHome = hostHome,
  ) {}

  /** Normalised absolute sandbox path; relative paths are taken from the home directory. */
  normalize(sandboxPath: string): string {
    if (typeof sandboxPath !== "string" || sandboxPath === "") {
      throw new InvalidArgumentError("A sandbox path must be a non-empty string.");
    }
    if (sandboxPath.includes("\0")) throw new PathOutsideSandboxError(sandboxPath.replaceAll("\0", "\\0"));
    const absolute = path.posix.resolve(SANDBOX_HOME, sandboxPath);
    if (absolute !== SANDBOX_HOME && !absolute.startsWith(`${SANDBOX_HOME}/`)) {
      throw new PathOutsideSandboxError(sandboxPath);
    }
    return absolute;
  }

  /** The host path of a sandbox path, lexically (symlinks not checked). */
  toHost(sandboxPath: string): string {
    const relative = path.posix.relative(SANDBOX_HOME, this.normalize(sandboxPath));
    return path.join(this.hostHome, ...relative.split("/").filter(Boolean));
  }

  /** The sandbox path of a host path inside the home directory. */
  toSandbox(hostPath: string): string {
    const relative = path.relative(this.hostHome, hostPath);
    return relative === "" ? SANDBOX_HOME : path.posix.join(SANDBOX_HOME, ...relative.split(path.sep));
  }

  /**
   * The host path to operate on, after checking that the existing part of the path, symlinks
   * resolved, stays inside the home directory. With `followLast: false` only the parent is
   * resolved, so the final entry itself may be a symlink (removing a link, listing it).
   */
  async resolve(sandboxPath: string, options: { followLast?: boolean } = {}): Promise<string> {
    const lexical = this.toHost(sandboxPath);
    const real =
      options.followLast === false && lexical !== this.hostHome
        ? path.join(await this.realpathOfExisting(path.dirname(lexical), sandboxPath), path.basename(lexical))
        : await this.realpathOfExisting(lexical, sandboxPath);
    if (real !== this.hostHome && !real.startsWith(this.hostHome + path.sep)) {
      throw new PathOutsideSandboxError(sandboxPath);
    }
    return real;
  }

  /** Rewrites `/home/user` in command text and environment values to the host directory. */
  toHostText(text: string): string {
    return text.replace(HOME_IN_TEXT, () => this.commandHome);
  }

  /** Rewrites the host directory (either spelling) in command output back to `/home/user`. */
  toSandboxText(text: string): string {
    return text.split(this.hostHome).join(SANDBOX_HOME).split(this.commandHome).join(SANDBOX_HOME);
  }

  /** Real path of the longest existing prefix, with the missing rest appended. */
  private async realpathOfExisting(hostPath: string, original: string): Promise<string> {
    const missing: string[] = [];
    let current = hostPath;
    for (;;) {
      try {
        return path.join(await fs.realpath(current), ...missing.reverse());
      } catch (error) {
        if (errorCode(error) !== "ENOENT" && errorCode(error) !== "ENOTDIR") throw error;
      }
      // realpath fails for a dangling symlink too: writing through it would create its target,
      // wherever that is, so a dangling link counts as outside.
      if (await fs.lstat(current).then((stat) => stat.isSymbolicLink(), () => false)) {
        throw new PathOutsideSandboxError(original);
      }
      missing.push(path.basename(current));
      const parent = path.dirname(current);
      if (parent === current) throw new PathOutsideSandboxError(original);
      current = parent;
    }
  }
}
