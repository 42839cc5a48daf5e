import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { openStore, pgliteDirOf, readDatabaseLock } from "@/lib/store";
import { lockFileOf } from "@/lib/store/lock";
import { createThrowawayDatabase } from "../helpers/postgres";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const children: ChildProcess[] = [];
const dirs: string[] = [];

/** A data directory of its own, its database already initialised (the run's template): what is tested is the lock, not initdb. */
function freshDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-lock-"));
  dirs.push(dir);
  fs.cpSync(inject("pgliteTemplate"), pgliteDirOf(dir), { recursive: true });
  return dir;
}

/** The environment of a child on `dataDir`, without the test process's own store settings. */
function childEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent", ...extra };
  delete env.DATABASE_URL;
  delete env.CLI_API_TOKEN;
  return env;
}

/** Another process holding `dataDir`'s database, its API recorded at `baseUrl`. */
async function holdDatabase(dataDir: string, baseUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "tests", "store", "hold-store.ts")], {
    cwd: ROOT,
    env: childEnv(dataDir, { PUBLIC_BASE_URL: baseUrl }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("holding")) resolve();
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`the holder exited (${code}):\n${output}`)));
  });
  return child;
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  return exited;
}

/** Runs an npm script of the project (`npm run bundle`, `npm run cleanup`) as a user would. */
function runNpmScript(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("npm", ["run", "--silent", script, "--", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

afterEach(async () => {
  for (const child of children.splice(0)) await killed(child);
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("one writer per embedded database", () => {
  it("refuses a second process while one holds the directory, and takes over a holder killed with SIGKILL", async () => {
    const dataDir = freshDataDir();
    const holder = await holdDatabase(dataDir, "http://127.0.0.1:9");
    expect(await readDatabaseLock(pgliteDirOf(dataDir))).toMatchObject({ pid: holder.pid, baseUrl: "http://127.0.0.1:9" });
    const refusal = openStore({ dataDir });
    await expect(refusal).rejects.toMatchObject({ status: 503, code: "database_locked" });
    await expect(refusal).rejects.toThrow(`pid ${holder.pid}`);

    await killed(holder);
    expect(fs.existsSync(lockFileOf(pgliteDirOf(dataDir)))).toBe(true);
    expect(await readDatabaseLock(pgliteDirOf(dataDir))).toBeNull();
    const sql = await openStore({ dataDir });
    await sql.query("select 1");
    // One process, one opening: a second one in the same process is refused too.
    await expect(openStore({ dataDir })).rejects.toMatchObject({ code: "database_locked" });
    await sql.close();
    expect(fs.existsSync(lockFileOf(pgliteDirOf(dataDir)))).toBe(false);
  });

  it("takes over from a holder that was killed but not yet reaped (a zombie)", async () => {
    const dataDir = freshDataDir();
    // `exec sleep` replaces the shell with a parent that never reaps: the killed holder stays a zombie.
    const script = `node --import tsx ${JSON.stringify(path.join(ROOT, "tests", "store", "hold-store.ts"))} </dev/null >/dev/null & exec sleep 600`;
    const parent = spawn("bash", ["-c", script], { cwd: ROOT, env: childEnv(dataDir), stdio: "ignore" });
    children.push(parent);
    let holder: { pid: number } | null = null;
    while (!holder) {
      holder = await readDatabaseLock(pgliteDirOf(dataDir));
      if (!holder) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    process.kill(holder.pid, "SIGKILL");
    const zombie = () => fs.readFileSync(`/proc/${holder!.pid}/stat`, "utf8").split(") ")[1][0] === "Z";
    while (!zombie()) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(() => process.kill(holder!.pid, 0)).not.toThrow();

    const sql = await openStore({ dataDir });
    await sql.close();
  });

  it("lets a real PostgreSQL be shared: DATABASE_URL takes no lock", async () => {
    const dataDir = freshDataDir();
    await holdDatabase(dataDir, "http://127.0.0.1:9");
    const database = await createThrowawayDatabase();
    try {
      const first = await openStore({ databaseUrl: database.url, dataDir });
      const second = await openStore({ databaseUrl: database.url, dataDir });
      await first.query("select 1");
      await second.query("select 1");
      await first.close();
      await second.close();
    } finally {
      await database.drop();
    }
  });

  it("has npm run bundle and npm run cleanup refuse with the holder named when the holder's API does not answer", async () => {
    const dataDir = freshDataDir();
    const holder = await holdDatabase(dataDir, "http://127.0.0.1:9");
    const env = childEnv(dataDir);
    for (const [script, args] of [
      ["bundle", ["--project", crypto.randomUUID()]],
      ["cleanup", ["--all"]],
    ] as const) {
      const run = await runNpmScript(script, [...args], env);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain("The embedded database is in use by another process");
      expect(run.stderr).toContain(`pid ${holder.pid}`);
      expect(run.stderr).toContain("http://127.0.0.1:9");
    }
  });

  it("has the CLIs ask for CLI_API_TOKEN when the holder's API answers", async () => {
    const api = http.createServer((request, response) => {
      response.writeHead(request.url === "/api/health" ? 200 : 404, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      const dataDir = freshDataDir();
      await holdDatabase(dataDir, baseUrl);
      const run = await runNpmScript("cleanup", ["--all"], childEnv(dataDir));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`A running server`);
      expect(run.stderr).toContain(baseUrl);
      expect(run.stderr).toContain("set CLI_API_TOKEN");
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });
});
