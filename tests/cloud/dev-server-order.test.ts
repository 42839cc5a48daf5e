import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { APP_DIR, SANDBOX_HOME, type Sandbox } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import { startCloudFixture, type CloudFixture } from "./fixture";

// Metro crawls the app, then watches it: a file created in between is never in its file map, so
// an app whose `convex/_generated/api.js` the backend dev server creates while Metro starts cannot
// resolve `../convex/_generated/api` until Metro restarts. Enable therefore restarts the app dev
// server once the backend dev server generated the module, unless the app had it already.

// A backend dev server that says nothing; it generates the API module once the test drops `release`.
const FAKE_BACKEND = `
const fs = require("fs");
fs.writeFileSync("../backend-started", "");
const poll = setInterval(() => {
  if (!fs.existsSync("../release")) return;
  clearInterval(poll);
  fs.mkdirSync("convex/_generated", { recursive: true });
  fs.writeFileSync("convex/_generated/api.js", 'import { anyApi } from "convex/server";\\nexport const api = anyApi;\\nexport const internal = anyApi;\\n');
}, 20);
setInterval(() => {}, 1 << 30);
`;

let fx: CloudFixture;

beforeAll(async () => {
  // The app dev server (the suite's stand-in) first records whether the API module was there.
  const appCommand = `{ test -f convex/_generated/api.js && echo generated || echo missing; } >> ../app-starts; ${process.env.APP_DEV_COMMAND}`;
  fx = await startCloudFixture({ BACKEND_DEV_COMMAND: `node ${SANDBOX_HOME}/fake-backend.js`, APP_DEV_COMMAND: appCommand });
});
afterAll(async () => {
  await fx.close();
});

async function projectWithFakeBackend(): Promise<{ project: Project; sandbox: Sandbox }> {
  const project = await fx.newProject();
  const sandbox = await fx.sandboxOf(project);
  await sandbox.files.write(`${SANDBOX_HOME}/fake-backend.js`, FAKE_BACKEND);
  return { project, sandbox };
}

/** What each start of the app dev server found: `generated` or `missing`. */
async function appStarts(sandbox: Sandbox): Promise<string[]> {
  const file = `${SANDBOX_HOME}/app-starts`;
  return (await sandbox.files.exists(file)) ? (await sandbox.files.read(file)).trim().split("\n") : [];
}

describe("enable starts the app dev server after the backend's codegen", () => {
  it("restarts the app dev server only once the backend dev server generated convex/_generated/api.js", async () => {
    const { project, sandbox } = await projectWithFakeBackend();
    const enabling = enableCloudBackend(project, openProjectSandbox);
    await vi.waitFor(async () => expect(await sandbox.files.exists(`${SANDBOX_HOME}/backend-started`)).toBe(true), { timeout: 60_000, interval: 50 });
    await sandbox.files.write(`${SANDBOX_HOME}/release`, "");
    await enabling;
    // Every start enable made (the preview's first start may come before it) found the module.
    expect((await appStarts(sandbox)).at(-1)).toBe("generated");
    expect(await sandbox.files.exists(`${APP_DIR}/convex/_generated/api.js`)).toBe(true);
  });

  it("restarts both at once for an app that has the generated module already: enable does not wait for a push", async () => {
    const { project, sandbox } = await projectWithFakeBackend();
    await sandbox.files.write(`${APP_DIR}/convex/_generated/api.js`, "export const api = {};\n");
    // The fake backend never reports a push and is never released: a wait would last minutes.
    await enableCloudBackend(project, openProjectSandbox);
    expect((await appStarts(sandbox)).at(-1)).toBe("generated");
    expect(await sandbox.files.exists(`${SANDBOX_HOME}/release`)).toBe(false);
  });
});
