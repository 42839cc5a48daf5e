import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BACKEND_PACKAGE } from "@/lib/app-names";
import { AppToolchain, NpmProgress, ToolchainError } from "@/lib/toolchain";

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
    // The lines between say where npm is.
    for (const line of progress.filter((line) => line.startsWith("  "))) {
      expect(line).toMatch(/^ {2}… (resolving: \d+ package manifests read|downloading: \d+ packages to fetch or unpack from the npm cache, [\d.]+ MB downloaded|finishing: writing the app's lock file, making the shared files read-only) \(\d+ s\)$/);
    }
  });

  it("counts npm's manifest reads, then its tarballs (fetched or from its cache, each once), from its http log lines", () => {
    // Recorded from npm 11 (`npm install --loglevel http`), a cold cache then a warm one.
    const npm = new NpmProgress();
    expect(npm.snapshot(0)).toEqual({ phase: "resolving", manifests: 0, packages: 0, bytes: 0 });
    for (const line of [
      "npm http fetch GET 200 https://registry.npmjs.org/semver 368ms (cache miss)",
      "npm http fetch GET 200 https://registry.npmjs.org/@expo%2fcli 13ms (cache stale)",
      "npm warn deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported",
    ]) {
      npm.read(line);
    }
    expect(npm.snapshot(0)).toEqual({ phase: "resolving", manifests: 2, packages: 0, bytes: 0 });
    for (const line of [
      "npm http cache semver@https://registry.npmjs.org/semver/-/semver-7.8.6.tgz 0ms (cache hit)",
      "npm http fetch GET 200 https://registry.npmjs.org/semver/-/semver-7.8.6.tgz 536ms (cache miss)",
      "npm http cache @expo/cli@https://registry.npmjs.org/@expo/cli/-/cli-54.0.16.tgz 0ms (cache hit)",
    ]) {
      npm.read(line);
    }
    expect(npm.snapshot(1_500)).toEqual({ phase: "downloading", manifests: 2, packages: 2, bytes: 1_500 });
  });

  it("installs once when two toolchains on one directory prepare together: the second waits for the first's install", async () => {
    const dir = path.join(workDir, "together");
    const lines: string[] = [];
    const first = new AppToolchain({ dir, onProgress: (line) => lines.push(line) });
    const second = new AppToolchain({ dir, onProgress: (line) => lines.push(line) });
    const [a, b] = await Promise.all([first.prepare(templateRoot), second.prepare(templateRoot)]);
    expect(a.root).toBe(b.root);
    expect(lines.filter((line) => line.startsWith("Preparing the app toolchain"))).toHaveLength(1);
    expect([first.status, second.status]).toEqual([{ state: "ready" }, { state: "ready" }]);
    expect((await fs.readdir(dir)).filter((entry) => entry.startsWith(".install-"))).toEqual([]);
  });

  it("takes over the install lock of a process that died, with the staging it left", async () => {
    const dir = path.join(workDir, "taken-over");
    const root = (await new AppToolchain({ dir: path.join(workDir, "cache") }).prepare(templateRoot)).root;
    const lock = path.join(dir, `.install-${path.basename(root)}`);
    await fs.mkdir(path.join(lock, "staging", "node_modules"), { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    await fs.writeFile(path.join(lock, "pid"), String(dead));
    const toolchain = new AppToolchain({ dir, onProgress: () => undefined });
    const prepared = await toolchain.prepare(templateRoot);
    expect(toolchain.status).toEqual({ state: "ready" });
    expect((await fs.readdir(dir)).sort()).toEqual([path.basename(prepared.root), "npm-cache"].sort());
  });

  it("follows another live process's install from its progress, and installs itself once that lock is gone", async () => {
    const dir = path.join(workDir, "followed");
    const root = (await new AppToolchain({ dir: path.join(workDir, "cache") }).prepare(templateRoot)).root;
    const lock = path.join(dir, `.install-${path.basename(root)}`);
    await fs.mkdir(lock, { recursive: true });
    // A live holder: this process's parent (the test runner), as another `npm start` would be.
    await fs.writeFile(path.join(lock, "pid"), String(process.ppid));
    const progress = { since: new Date().toISOString(), phase: "downloading", manifests: 40, packages: 12, bytes: 3_000_000 };
    await fs.writeFile(path.join(lock, "progress.json"), JSON.stringify(progress));
    const toolchain = new AppToolchain({ dir, onProgress: () => undefined });
    const prepared = toolchain.prepare(templateRoot);
    await vi.waitFor(() => expect(toolchain.status).toEqual({ state: "preparing", ...progress }), { timeout: 30_000, interval: 100 });
    expect(await toolchain.isReady(templateRoot)).toBe(false);
    // The holder ended without a toolchain (it failed): this one installs.
    await fs.rm(lock, { recursive: true });
    await prepared;
    expect(toolchain.status).toEqual({ state: "ready" });
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
