import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKEND_PACKAGE } from "@/lib/app-names";
import { AppToolchain, ToolchainError } from "@/lib/toolchain";

// A one-package template keeps the real npm install short; the toolchain treats every template alike.
let workDir: string;
let templateRoot: string;
beforeAll(async () => {
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), "toolchain-"));
  templateRoot = path.join(workDir, "tiny");
  await fs.mkdir(templateRoot);
  await fs.writeFile(path.join(templateRoot, "package.json"), JSON.stringify({ name: "tiny", private: true, dependencies: { "is-number": "7.0.0" } }));
});
afterAll(async () => {
  await fs.rm(workDir, { recursive: true, force: true });
});

describe("AppToolchain", () => {
  it("fails clearly when the registry cannot be reached, then a retry installs it, with progress lines", async () => {
    const npmEnv: Record<string, string> = { npm_config_registry: "http://127.0.0.1:9/", npm_config_fetch_retries: "0" };
    const progress: string[] = [];
    const toolchain = new AppToolchain({ dir: path.join(workDir, "cache"), npmEnv, onProgress: (line) => progress.push(line), progressIntervalMs: 200 });

    const failure = await toolchain.prepare(templateRoot).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolchainError);
    expect(failure).toMatchObject({ status: 503, code: "toolchain_unavailable" });
    expect((failure as Error).message).toContain("http://127.0.0.1:9/");
    expect((failure as Error).message).toMatch(/Check that the registry can be reached, then retry\.$/);
    expect(toolchain.status).toEqual({ state: "failed", message: (failure as Error).message });
    expect(await toolchain.isReady(templateRoot)).toBe(false);
    expect((await fs.readdir(path.join(workDir, "cache"))).filter((entry) => entry.startsWith(".install-"))).toEqual([]);

    delete npmEnv.npm_config_registry;
    const { root } = await toolchain.prepare(templateRoot);
    expect(toolchain.status).toEqual({ state: "ready" });
    expect(await toolchain.isReady(templateRoot)).toBe(true);
    expect(JSON.parse(await fs.readFile(path.join(root, "node_modules", "is-number", "package.json"), "utf8")).version).toBe("7.0.0");
    expect(progress[0]).toMatch(/^Preparing the app toolchain \(first use\)/);
    // The template's package, and the backend package the enable step adds, like a sandbox image.
    expect(JSON.parse(await fs.readFile(path.join(root, "node_modules", BACKEND_PACKAGE, "package.json"), "utf8")).name).toBe(BACKEND_PACKAGE);
    expect(progress.at(-1)).toMatch(/^App toolchain ready: \d+ packages in \d+ s\.$/);
  });

  it("hard-links node_modules into an app, copies the lock files, and keeps the shared files read-only", async () => {
    const toolchain = new AppToolchain({ dir: path.join(workDir, "cache") });
    const { root } = await toolchain.prepare(templateRoot);
    const app = path.join(workDir, "app");
    await fs.mkdir(app);
    await toolchain.linkInto(templateRoot, app);

    const shared = await fs.stat(path.join(root, "node_modules", "is-number", "index.js"));
    const linked = await fs.stat(path.join(app, "node_modules", "is-number", "index.js"));
    expect(linked.ino).toBe(shared.ino);
    expect(shared.mode & 0o222).toBe(0);
    // npm rewrites these in place on every install: the app owns its copies.
    for (const file of ["package-lock.json", path.join("node_modules", ".package-lock.json")]) {
      const copy = await fs.stat(path.join(app, file));
      expect(copy.ino, file).not.toBe((await fs.stat(path.join(root, file))).ino);
      expect(copy.mode & 0o200, file).not.toBe(0);
    }
    // The app's lock file is the template's: the backend package is installed but not yet a dependency.
    const appLock = JSON.parse(await fs.readFile(path.join(app, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
    expect(appLock.packages["node_modules/is-number"].version).toBe("7.0.0");
    expect(appLock.packages[`node_modules/${BACKEND_PACKAGE}`]).toBeUndefined();
    expect(await fs.stat(path.join(app, "node_modules", BACKEND_PACKAGE, "package.json"))).toBeTruthy();
    // A directory of the app stays writable: npm adds packages there.
    await fs.writeFile(path.join(app, "node_modules", "is-number", "added.txt"), "ok");
  });
});
