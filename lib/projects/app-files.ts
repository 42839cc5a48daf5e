import { BadRequestError, NotFoundError } from "@/lib/errors";
import { APP_DIR } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import type { OpenProjectSandbox } from "./index";

/** The largest file the builder's tools read or write, in characters (source files, not assets). */
export const MAX_APP_FILE_CHARS = 1_000_000;

/**
 * A path the builder names, relative to the app's folder, as an absolute sandbox path. Paths that
 * leave the folder, and the repository's own `.git`, are refused: the agent edits the app, not
 * its history.
 */
function appFilePath(path: string): string {
  const parts = path.split("/");
  if (path.startsWith("/") || parts.some((part) => part === "" || part === "." || part === "..") || parts[0] === ".git") {
    throw new BadRequestError("path must be a file path relative to the app's folder (no leading /, no . or .. segments, not in .git).", "invalid_path");
  }
  return `${APP_DIR}/${path}`;
}

/** Writes a text file of the project's app (folders are created); the dev servers pick it up. */
export async function writeAppFile(project: Project, openSandbox: OpenProjectSandbox, path: string, content: string): Promise<void> {
  const file = appFilePath(path);
  await (await openSandbox(project)).files.write(file, content);
}

/** A text file of the project's app; 404 `file_not_found` when there is none. */
export async function readAppFile(project: Project, openSandbox: OpenProjectSandbox, path: string): Promise<string> {
  const file = appFilePath(path);
  const sandbox = await openSandbox(project);
  if (!(await sandbox.files.exists(file))) throw new NotFoundError(`${path} does not exist in the app.`, "file_not_found");
  return sandbox.files.read(file);
}
