import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BACKEND_PACKAGE_RANGE, MIN_BACKEND_PACKAGE_VERSION } from "@/lib/app-names";
import { ensureBackendPackage, INSTALL_COMMAND } from "@/lib/cloud/backend-package";
import { APP_DIR, getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";

let sandbox: Sandbox;
const readPackage = async () => JSON.parse(await sandbox.files.read(`${APP_DIR}/package.json`));
const pin = async (range: string) => {
  const manifest = await readPackage();
  await sandbox.files.write(`${APP_DIR}/package.json`, JSON.stringify({ ...manifest, dependencies: { ...manifest.dependencies, convex: range } }, null, 2) + "\n");
};

function withoutDownloadAddresses(lockText: string): { packages: Record<string, { resolved?: string; dependencies?: Record<string, string> }> } {
  const lock = JSON.parse(lockText);
  for (const entry of Object.values<{ resolved?: string }>(lock.packages)) delete entry.resolved;
  return lock;
}

beforeAll(async () => {
  await resetProcessSingleton("sandboxProvider");
  sandbox = await getSandboxProvider().create({ template: "app" });
});
afterAll(async () => {
  await getSandboxProvider().kill(sandbox.sandboxId);
});

describe("ensureBackendPackage", () => {
  it("gives an app as the toolchain made it the lock file npm wrote for the last such app, without running npm", async () => {
    const provider = getSandboxProvider();
    const [first, second, installed] = await Promise.all([1, 2, 3].map(() => provider.create({ template: "app" })));
    try {
      const hiddenLock = await first.files.read(`${APP_DIR}/node_modules/.package-lock.json`);
      // The first either runs npm and records its lock, or finds one recorded by an earlier enable.
      expect(await ensureBackendPackage(first)).toEqual([]);
      const run = vi.spyOn(second.commands, "run");
      expect(await ensureBackendPackage(second)).toEqual([]);
      expect(run).not.toHaveBeenCalled();

      // The same edit, then npm itself, in the same kind of sandbox.
      await installed.files.write(`${APP_DIR}/package.json`, await second.files.read(`${APP_DIR}/package.json`));
      await installed.commands.run(INSTALL_COMMAND, { cwd: APP_DIR, timeoutMs: 300_000 });
      // npm adds download addresses (`resolved`) as its cache happens to know them; the rest is the same.
      const lockOf = async (sandbox: Sandbox, file: string) => withoutDownloadAddresses(await sandbox.files.read(`${APP_DIR}/${file}`));
      const lock = await lockOf(second, "package-lock.json");
      expect(lock).toEqual(await lockOf(installed, "package-lock.json"));
      expect(lock.packages[""].dependencies?.convex).toBe(BACKEND_PACKAGE_RANGE);
      for (const sandbox of [second, installed]) expect(await lockOf(sandbox, "node_modules/.package-lock.json")).toEqual(withoutDownloadAddresses(hiddenLock));
    } finally {
      await Promise.all([first, second, installed].map((sandbox) => provider.kill(sandbox.sandboxId)));
    }
  });

  it("keeps an app's own pin, and warns when it allows releases older than the supported one", async () => {
    await pin("^1.10.0");
    const warnings = await ensureBackendPackage(sandbox);
    expect(warnings).toEqual([expect.stringContaining(`package.json pins convex "^1.10.0", which allows versions older than the supported ${MIN_BACKEND_PACKAGE_VERSION}; it was kept.`)]);
    expect((await readPackage()).dependencies.convex).toBe("^1.10.0");
    expect(await sandbox.files.exists(`${APP_DIR}/node_modules/convex/package.json`)).toBe(true);
    // Installed already: a second call neither warns about installing nor runs npm again.
    expect(await ensureBackendPackage(sandbox)).toEqual(warnings);
  });

  it("reports a failed install as a warning, never a silent success", async () => {
    await pin("99.0.0");
    await sandbox.files.remove(`${APP_DIR}/node_modules/convex`);
    const warnings = await ensureBackendPackage(sandbox);
    expect(warnings).toEqual([expect.stringMatching(/^Installing convex failed \(exit code \d+\): .*(ETARGET|No matching version)/s)]);
  });
});
