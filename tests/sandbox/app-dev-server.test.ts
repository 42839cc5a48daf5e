import "../helpers/real-dev-servers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reloadConfig } from "@/lib/config";
import { ConflictError } from "@/lib/errors";
import { APP_DEV_SERVER_ROLE, ensureAppDevServer, getAppPreviewUrl, restartAppDevServer, startAppDevServer, stopAppDevServer } from "@/lib/dev-servers";
import { APP_DIR, findProcessesByRole, getSandboxProvider, SandboxError, SandboxTimeoutError, type Sandbox, type SandboxProvider } from "@/lib/sandbox";
import { isProcessAlive } from "@/lib/sandbox/drivers/local-os-processes";
import { resetProcessSingleton } from "@/lib/singletons";

/** The page's entry bundle as Metro serves it. */
async function entryBundle(previewUrl: string): Promise<string> {
  const page = await (await fetch(previewUrl)).text();
  const src = /<script src="(\/node_modules\/expo-router\/entry\.bundle\?[^"]+)"/.exec(page)?.[1];
  if (!src) throw new Error(`no expo-router entry bundle in ${page.slice(0, 200)}`);
  return (await fetch(new URL(src.replaceAll("&amp;", "&"), previewUrl))).text();
}

let provider: SandboxProvider;
let sandbox: Sandbox;
const startedPids: number[] = [];

beforeAll(async () => {
  await resetProcessSingleton("sandboxProvider");
  provider = getSandboxProvider();
  sandbox = await provider.create({ template: "app" });
});

afterAll(async () => {
  await provider.kill(sandbox.sandboxId);
  for (const pid of startedPids) expect(await isProcessAlive(pid)).toBe(false);
});

describe("app dev server (local driver, Expo's own dev server)", () => {
  it("starts Expo, whose Metro bundle holds the home screen and follows edits", async () => {
    const lines: string[] = [];
    const server = await startAppDevServer(sandbox, { onStdout: (line) => void lines.push(line) });
    startedPids.push(server.handle.pid);
    // Beside a dashboard on localhost, previews are on another site (LOCAL_PREVIEW_HOST).
    expect(server.previewUrl).toBe(`http://127.0.0.1:${server.port}`);
    // Metro answers as soon as it listens; its output may reach us a moment later (loaded machine).
    await vi.waitFor(() => expect(lines).toContain(`Waiting on http://localhost:${server.port}\n`), { timeout: 30_000, interval: 50 });

    const page = await fetch(server.previewUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await entryBundle(server.previewUrl)).toContain("Welcome to your app");

    const screen = await sandbox.files.read(`${APP_DIR}/app/index.tsx`);
    await sandbox.files.write(`${APP_DIR}/app/index.tsx`, screen.replace("Welcome to your app", "Tip calculator"));
    // Metro's watcher picks the edit up; the next bundle it serves has it.
    for (let attempt = 1; !(await entryBundle(server.previewUrl)).includes("Tip calculator"); attempt++) {
      if (attempt === 100) throw new Error("Metro never served the edit");
    }
  });

  it("serves the app's public/ files byte for byte, and never its own files", async () => {
    const previewUrl = await getAppPreviewUrl(sandbox); // the server started by the previous test
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255]);
    await sandbox.files.write(`${APP_DIR}/public/logo.png`, png);
    const asset = await fetch(`${previewUrl}/logo.png`);
    expect(asset.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await asset.arrayBuffer())).toEqual(png);
    const packageJson = await sandbox.files.read(`${APP_DIR}/package.json`);
    expect(await (await fetch(`${previewUrl}/package.json`)).text()).not.toContain(packageJson.slice(0, 40));
    expect((await fetch(previewUrl, { method: "HEAD" })).status).toBe(200);
  });

  it("refuses a second server, restarts on the same URL and stops", async () => {
    await expect(startAppDevServer(sandbox)).rejects.toBeInstanceOf(ConflictError);
    const [before] = await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE);
    const restarted = await restartAppDevServer(sandbox);
    startedPids.push(restarted.handle.pid);
    expect(restarted.handle.pid).not.toBe(before.pid);
    expect(await isProcessAlive(before.pid)).toBe(false);
    expect((await fetch(restarted.previewUrl)).status).toBe(200);

    expect(await stopAppDevServer(sandbox)).toBe(true);
    expect(await stopAppDevServer(sandbox)).toBe(false);
    await expect(fetch(restarted.previewUrl)).rejects.toThrow();
  });

  it("ensures a server runs after a sandbox restart, without starting a second one", async () => {
    await sandbox.restart();
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toEqual([]);
    const previewUrl = await ensureAppDevServer(sandbox);
    const [running] = await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE);
    startedPids.push(running.pid);
    expect(await ensureAppDevServer(sandbox)).toBe(previewUrl);
    expect((await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).map((info) => info.pid)).toEqual([running.pid]);
    expect((await fetch(previewUrl)).status).toBe(200);
    await stopAppDevServer(sandbox);
  });

  it("reports a server that exits before answering, with its error output", async () => {
    const failure = await startAppDevServer(sandbox, { command: "echo 'Cannot find module expo' >&2; exit 1" }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect(failure).toMatchObject({ code: "app_dev_server_failed" });
    expect((failure as Error).message).toContain("Cannot find module expo");
  });

  it("kills a server that does not answer in time", async () => {
    await expect(startAppDevServer(sandbox, { command: "sleep 300", readyTimeoutMs: 300 })).rejects.toBeInstanceOf(SandboxTimeoutError);
    expect(await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).toEqual([]);
  });

  it("runs APP_DEV_COMMAND when it is configured", async () => {
    vi.stubEnv("APP_DEV_COMMAND", `node -e "require('http').createServer((q, s) => s.end('custom')).listen(process.env.PORT)"`);
    reloadConfig();
    try {
      const server = await startAppDevServer(sandbox);
      startedPids.push(server.handle.pid);
      expect(await (await fetch(server.previewUrl)).text()).toBe("custom");
      await stopAppDevServer(sandbox);
    } finally {
      vi.unstubAllEnvs();
      reloadConfig();
    }
  });
});
