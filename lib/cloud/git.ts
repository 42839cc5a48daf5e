import { getConfig } from "@/lib/config";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";

const AUTHOR = '-c user.name="Cloud backend" -c user.email="cloud-backend@localhost"';

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Commits the staged changes with our author, doing nothing when none are staged. */
function commitStaged(sandbox: Sandbox, stage: string, message: string) {
  return sandbox.commands.run(`${stage} && (git diff --cached --quiet || git ${AUTHOR} commit -q -m ${quote(message)})`, {
    cwd: APP_DIR,
    timeoutMs: 60_000,
  });
}

/** Commits every change in the app repository (the enable commit, spec 4.1 step 6). */
export async function commitAll(sandbox: Sandbox): Promise<void> {
  await commitStaged(sandbox, "git add -A", `Enable ${getConfig().BACKEND_PRODUCT_NAME} cloud backend`);
}

/** Commits the changes under `paths` (relative to the app) and nothing else. */
export async function commitPaths(sandbox: Sandbox, paths: string[], message: string): Promise<void> {
  await commitStaged(sandbox, `git add -A -- ${paths.map(quote).join(" ")}`, message);
}
