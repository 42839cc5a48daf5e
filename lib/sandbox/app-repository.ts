import fs from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError } from "./errors";
import { APP_DIR, type Sandbox, type WriteEntry } from "./port";

/** Where `create({ template })` looks for templates unless a driver is told otherwise. */
export const DEFAULT_TEMPLATES_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "templates");

/** Author of the sandbox's commits; stored in the repository so later commits work as well. */
const GIT_IDENTITY = { name: "App Builder", email: "builder@sandbox.local" };

/** Host-side leftovers that must never be copied into a sandbox. */
const SKIPPED_ENTRIES = new Set([".git", "node_modules", ".DS_Store"]);

async function readTemplateFiles(root: string, relative = ""): Promise<WriteEntry[]> {
  const entries: WriteEntry[] = [];
  for (const entry of await fs.readdir(path.join(root, relative), { withFileTypes: true })) {
    if (SKIPPED_ENTRIES.has(entry.name)) continue;
    const child = path.posix.join(relative, entry.name);
    if (entry.isDirectory()) entries.push(...(await readTemplateFiles(root, child)));
    else if (entry.isFile()) entries.push({ path: `${APP_DIR}/${child}`, data: await fs.readFile(path.join(root, child)) });
  }
  return entries;
}

export interface SeedOptions {
  /** @default `<cwd>/templates` */
  templatesDir?: string;
  /** Gives the app its dependencies before the first commit (which then records the lock file). */
  installDependencies?: (templateRoot: string) => Promise<void>;
}

/**
 * Copies `templates/<template>/` to the sandbox's app directory and makes it a git repository
 * with one commit. Works through the port only, so every driver seeds the same way.
 */
export async function seedAppFromTemplate(sandbox: Sandbox, template: string, options: SeedOptions = {}): Promise<void> {
  const templatesDir = options.templatesDir ?? DEFAULT_TEMPLATES_DIR;
  if (!/^[a-z0-9][a-z0-9-]*$/.test(template)) throw new InvalidArgumentError(`Invalid template name ${JSON.stringify(template)}.`);
  const root = path.join(/*turbopackIgnore: true*/ templatesDir, template);
  if (!(await fs.stat(root).then((stat) => stat.isDirectory(), () => false))) {
    throw new InvalidArgumentError(`Unknown sandbox template ${JSON.stringify(template)}.`);
  }
  await sandbox.files.write(await readTemplateFiles(root));
  await options.installDependencies?.(root);
  await sandbox.commands.run(
    [
      "git init -q -b main",
      `git config user.name ${JSON.stringify(GIT_IDENTITY.name)}`,
      `git config user.email ${JSON.stringify(GIT_IDENTITY.email)}`,
      "git add -A",
      `git commit -q -m ${JSON.stringify(`Create app from the ${template} template`)}`,
    ].join(" && "),
    { cwd: APP_DIR },
  );
}

/**
 * Removes `.git/index.lock` left by a git command that a restart killed, so the next git command
 * (a commit, a bundle's checkout) does not refuse with "Another git process seems to be running".
 * Only call it while no command runs in the sandbox. Every file stays, committed or not.
 */
export async function removeStaleGitLock(sandbox: Sandbox): Promise<void> {
  await sandbox.files.remove(`${APP_DIR}/.git/index.lock`);
}
