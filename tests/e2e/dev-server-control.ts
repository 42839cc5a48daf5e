import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const FIXTURE = path.join(import.meta.dirname, "fixtures", "backend-dev-on-trigger.mjs");

/**
 * The test's side of the stand-in backend dev server (fixtures/backend-dev-on-trigger.mjs): the
 * BACKEND_DEV_COMMAND to give the product, a way to make it print an error, and the admin keys
 * it was started with.
 */
export function createDevServerControl() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-e2e-control-"));
  const keysDir = path.join(dir, "admin-keys");
  fs.mkdirSync(keysDir);
  const readKeys = () =>
    fs
      .readdirSync(keysDir)
      .filter((name) => !name.endsWith(".tmp"))
      .map((name) => fs.readFileSync(path.join(keysDir, name), "utf8"));

  /** Makes the running stand-in print `line` as it is now. */
  const triggerLine = (line: string) => {
    fs.writeFileSync(path.join(dir, "trigger.tmp"), line);
    fs.renameSync(path.join(dir, "trigger.tmp"), path.join(dir, "trigger"));
  };

  return {
    command: `node ${FIXTURE} ${dir}`,

    /** Makes the running stand-in print `Error: <text>` now. */
    triggerError(text: string): void {
      triggerLine(`Error: ${text}`);
    },

    /** Makes the running stand-in print `line` as it is now (e.g. a success mark after errors). */
    triggerLine,

    /** The admin keys of the first `count` starts, once that many starts happened. */
    waitForAdminKeys(count: number, timeoutMs: number): Promise<string[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const keys = readKeys();
          if (keys.length < count) return;
          clearTimeout(timer);
          watcher.close();
          resolve(keys);
        };
        const watcher = fs.watch(keysDir, check);
        const timer = setTimeout(() => {
          watcher.close();
          reject(new Error(`Only ${readKeys().length} of ${count} backend dev server starts within ${timeoutMs} ms.`));
        }, timeoutMs);
        check();
      });
    },

    cleanup(): void {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
