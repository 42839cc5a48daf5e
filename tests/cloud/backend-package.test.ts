import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIN_BACKEND_PACKAGE_VERSION } from "@/lib/app-names";
import { ensureBackendPackage } from "@/lib/cloud/backend-package";
import { APP_DIR, getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";

let sandbox: Sandbox;
const readPackage = async () => JSON.parse(await sandbox.files.read(`${APP_DIR}/package.json`));
const pin = async (range: string) => {
  const manifest = await readPackage();
  await sandbox.files.write(`${APP_DIR}/package.json`, JSON.stringify({ ...manifest, dependencies: { ...manifest.dependencies, convex: range } }, null, 2) + "\n");
};

beforeAll(async () => {
  await resetProcessSingleton("sandboxProvider");
  sandbox = await getSandboxProvider().create({ template: "app" });
});
afterAll(async () => {
  await getSandboxProvider().kill(sandbox.sandboxId);
});

describe("ensureBackendPackage", () => {
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
