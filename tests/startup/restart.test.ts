import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendProjectNameFor } from "@/lib/backend";
import { openStore } from "@/lib/store";
import { getDevServerLease } from "@/lib/store/dev-server-leases";
import { startProductServer, type ProductServer } from "../e2e/server";
import { STAND_IN_EXPORT_COMMAND } from "../helpers/export-stand-in";
import { SseReader } from "../realtime/sse-client";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
/** The first start may build the app (`next build`) on a loaded machine. */
const START_TIMEOUT_MS = 10 * 60_000;
/** Issue 15: after a restart, previews and backend dev servers run again within this. */
const RESUME_WITHIN_MS = 30_000;

let server: ProductServer;
let restarted: ProductServer | undefined;
let startedAgain: ProductServer | undefined;
let token: string;
let projectId: string;

async function api<T>(base: ProductServer, method: "GET" | "POST" | "DELETE", pathname: string, body?: object): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base.baseUrl}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { "content-type": "application/json" }) },
    body: body && JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** Runs `npm run <script>` beside the server, on its DATA_DIR, as an operator would. */
function runNpmScript(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: server.dataDir, PUBLIC_BASE_URL: server.baseUrl, LOG_LEVEL: "silent", ...env };
  delete childEnv.CLI_API_TOKEN;
  Object.assign(childEnv, env);
  const child = spawn("npm", ["run", "--silent", script, "--", ...args], { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** Polls `check` every 250 ms until it holds or `timeoutMs` passed; answers how long it took. */
async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Whether the preview answers 200; a refused connection is `false`. */
const previewAnswers = (previewUrl: string) =>
  fetch(previewUrl, { signal: AbortSignal.timeout(5_000) }).then((response) => response.status === 200, () => false);
const backendDevServerRuns = async (base: ProductServer) =>
  (await api<{ backendDevServer: string }>(base, "GET", `/api/backend/status?projectId=${projectId}`)).body.backendDevServer === "running";

beforeAll(async () => {
  // The bundle the CLI asks for is the stand-in export's: this file proves the CLI and the server
  // around it; tests/bundles/build.test.ts proves the real `expo export`, minutes of CPU each.
  server = await startProductServer({ env: { BUNDLE_EXPORT_COMMAND: STAND_IN_EXPORT_COMMAND }, timeoutMs: START_TIMEOUT_MS });
  token = /API token \(shown only now, keep it\):\s+(\S+)/.exec(server.output())![1];
  projectId = /Demo project: (\S+)/.exec(server.output())![1];
  // The demo project gets its sandbox, preview and backend (both dev servers running).
  const enabled = await api<{ success: boolean }>(server, "POST", "/api/cloud/enable", { projectId });
  expect(enabled).toMatchObject({ status: 200, body: { success: true } });
}, START_TIMEOUT_MS + 300_000);

afterAll(async () => {
  await startedAgain?.stop();
  await restarted?.stop();
  await server?.stop();
});

describe("a CLI and a second server beside a running server (one writer per embedded database)", () => {
  it("runs npm run bundle, cleanup and assets:reconcile through the server's API; the server serves the bundle at its PUBLIC_BASE_URL", async () => {
    const refused = await runNpmScript("bundle", ["--project", projectId], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("set CLI_API_TOKEN");

    const run = await runNpmScript("bundle", ["--project", projectId], { CLI_API_TOKEN: token });
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(result).toMatchObject({ success: true, bundleUrl: expect.stringMatching(/\/ios\/index\.js$/) });
    for (const url of [result.bundleUrl, result.manifestUrl]) {
      expect(url.startsWith(`${server.baseUrl}/blob/bundles/${projectId}/`)).toBe(true);
      const response = await fetch(url);
      expect(response.status).toBe(200);
      const bytes = (await response.arrayBuffer()).byteLength;
      expect(bytes).toBeGreaterThan(0);
      // Served by the fast path in front of Next.js, whose response path would drop Content-Length.
      expect(response.headers.get("content-length")).toBe(String(bytes));
      const head = await fetch(url, { method: "HEAD" });
      expect([head.status, head.headers.get("content-length"), await head.text()]).toEqual([200, String(bytes), ""]);
    }

    const cleanup = await runNpmScript("cleanup", ["--all", "--dry-run"], { CLI_API_TOKEN: token });
    expect(cleanup.code, cleanup.stderr).toBe(0);
    expect(cleanup.stdout).toMatch(/1 project\(s\): kept 1 commit\(s\), would delete 0 commit\(s\)/);

    const reconcile = await runNpmScript("assets:reconcile", ["--all", "--dry-run"], { CLI_API_TOKEN: token });
    expect(reconcile.code, reconcile.stderr).toBe(0);
    expect(reconcile.stdout).toContain("1 project(s): 0 orphan blob(s) to delete");
    // Three CLI processes and the server's build job: minutes on a loaded 2-core machine.
  }, 600_000);

  it("refuses a second server on the same DATA_DIR, naming the holder", async () => {
    const second = startProductServer({ dataDir: server.dataDir, timeoutMs: START_TIMEOUT_MS });
    await expect(second).rejects.toThrow(/Not starting: The embedded database is in use by another process \(pid \d+/);
    expect((await fetch(`${server.baseUrl}/api/health`)).status).toBe(200);
  });
});

describe("server restart after SIGKILL", () => {
  it("brings previews and backend dev servers back by itself", async () => {
    const { body: project } = await api<{ previewUrl: string }>(server, "GET", `/api/projects/${projectId}`);
    expect(await previewAnswers(project.previewUrl)).toBe(true);
    expect(await backendDevServerRuns(server)).toBe(true);

    await server.kill();
    // The dev servers died with it.
    await waitFor("the preview to go down", 60_000, async () => !(await previewAnswers(project.previewUrl)));

    restarted = await startProductServer({ dataDir: server.dataDir, port: Number(new URL(server.baseUrl).port), timeoutMs: START_TIMEOUT_MS });
    // Nobody opens the dashboard or the preview: the server resumes both on its own.
    const previewMs = await waitFor("the preview to come back", RESUME_WITHIN_MS, () => previewAnswers(project.previewUrl));
    const backendMs = await waitFor("the backend dev server to come back", RESUME_WITHIN_MS, () => backendDevServerRuns(restarted!));
    console.log(`resumed after the restarted server answered health: preview ${previewMs} ms, backend dev server +${backendMs} ms`);
  }, 600_000);
});

describe("graceful shutdown", () => {
  it("SIGTERM ends the open error streams, hands the backend dev server lease back and exits 0", async () => {
    const base = restarted!;
    const response = await fetch(`${base.baseUrl}/api/projects/${projectId}/errors/stream`, { headers: { authorization: `Bearer ${token}` } });
    const reader = new SseReader(response.body!);
    expect((await reader.next())?.comments).toContain("connected");

    // SIGTERM to the process group, as \`stop\` sends it (SIGKILL only after 10 s).
    await base.stop();
    expect(base.exitCode(), base.output().slice(-4000)).toBe(0);
    // Ended by the server, not cut: the rest reads to a clean end.
    await reader.rest();
    const db = await openStore({ dataDir: base.dataDir });
    try {
      expect(await getDevServerLease(db, projectId)).toMatchObject({ ownerInstanceId: null, held: false });
    } finally {
      await db.close();
    }
  }, 120_000);
});

/** Every file under `dir` whose path names `projectId` (the fs blob store keeps pathnames as paths). */
const filesNaming = (dir: string, projectId: string): string[] =>
  fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]).filter((entry) => entry.includes(projectId)) : [];

describe("project delete after a crash", () => {
  it("deletes the enabled project the restarted server resumed: 200, then no row, blobs, backend project or sandbox; again 404", async () => {
    // Started again after the SIGKILL and the graceful stop: instrumentation resumed the sandbox,
    // so the sandbox provider and its error classes come from the instrumentation bundle.
    startedAgain = await startProductServer({ dataDir: server.dataDir, port: Number(new URL(server.baseUrl).port), timeoutMs: START_TIMEOUT_MS });
    const { body: project } = await api<{ sandboxId: string }>(startedAgain, "GET", `/api/projects/${projectId}`);
    const deleted = await api<object>(startedAgain, "DELETE", `/api/projects/${projectId}`);
    expect(deleted).toEqual({ status: 200, body: { success: true } });
    expect((await api(startedAgain, "GET", `/api/projects/${projectId}`)).status).toBe(404);
    expect(await api(startedAgain, "DELETE", `/api/projects/${projectId}`)).toMatchObject({ status: 404, body: { error: { code: "project_not_found" } } });
    await startedAgain.stop();

    expect(fs.existsSync(path.join(server.dataDir, "sandboxes", project.sandboxId))).toBe(false);
    expect(filesNaming(path.join(server.dataDir, "blobs"), projectId)).toEqual([]);
    const db = await openStore({ dataDir: server.dataDir });
    try {
      expect((await db.query("select id from projects where id = $1", [projectId])).rows).toEqual([]);
      expect((await db.query("select id from emulator_projects where name = $1", [backendProjectNameFor(projectId)])).rows).toEqual([]);
    } finally {
      await db.close();
    }
  }, START_TIMEOUT_MS);
});
