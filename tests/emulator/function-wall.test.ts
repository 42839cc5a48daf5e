import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionManagedProject, type ProvisionedBackendProject } from "@/lib/backend";
import { getConfig } from "@/lib/config";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";
import { TEST_POSTGRES_URL } from "../helpers/postgres-url";
import { TEST_REDIS_URL } from "../helpers/redis-url";

/**
 * Pushed functions are hostile code: from a mutation and from an action pushed with the real CLI,
 * every way out of the runner's wall is tried and each attempt must fail the way the wall makes it
 * fail (the file is not there, the port answers nothing, the process is not visible), not merely
 * throw. Then a runner that takes 2 GB of off-heap memory, and one that kills itself, leave the
 * service answering and the next call working.
 */

const CONVEX_BIN = path.resolve("node_modules/.bin/convex");

const PROBES = `import { v } from "convex/values";
import { action, mutation, query } from "./_generated/server";

type Outcome = { ok: true; value: string } | { ok: false; code: string; message: string };

const builtin = (name: string): any => (process as any).getBuiltinModule(name);

async function attempt(run: () => unknown): Promise<Outcome> {
  try {
    return { ok: true, value: String(await run()).slice(0, 300) };
  } catch (error: any) {
    return { ok: false, code: String(error?.code ?? error?.name), message: String(error?.message).slice(0, 300) };
  }
}

function connect(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = builtin("node:net").connect({ host, port });
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(Object.assign(new Error("no answer"), { code: "ETIMEDOUT" }));
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", reject);
  });
}

const targets = { serverPid: v.number(), dataDir: v.string(), sandboxFile: v.string(), ports: v.array(v.number()), hostAddress: v.string() };

async function probe(t: { serverPid: number; dataDir: string; sandboxFile: string; ports: number[]; hostAddress: string }) {
  const fs = builtin("node:fs");
  const childProcess = builtin("node:child_process");
  return {
    uid: process.getuid!(),
    processes: fs.readdirSync("/proc").filter((entry: string) => /^\\d+$/.test(entry)),
    serverEnviron: await attempt(() => fs.readFileSync("/proc/" + t.serverPid + "/environ", "utf8")),
    initEnviron: await attempt(() => fs.readFileSync("/proc/1/environ", "utf8")),
    secretsKey: await attempt(() => fs.readFileSync(t.dataDir + "/secrets.key", "utf8")),
    dataDir: await attempt(() => fs.readdirSync(t.dataDir).join(",")),
    plantInDataDir: await attempt(() => fs.writeFileSync(t.dataDir + "/planted", "x")),
    plantInModules: await attempt(() => fs.writeFileSync(process.cwd() + "/planted.js", "x")),
    sandboxFile: await attempt(() => fs.readFileSync(t.sandboxFile, "utf8")),
    loopback: await Promise.all(t.ports.map((port) => attempt(() => connect("127.0.0.1", port)))),
    hostAddress: await Promise.all(t.ports.map((port) => attempt(() => connect(t.hostAddress, port)))),
    signalServer: await attempt(() => process.kill(t.serverPid, "SIGTERM")),
    signalInit: await attempt(() => process.kill(1, "SIGKILL")),
    shell: await attempt(() => childProcess.execFileSync("/bin/sh", ["-c", "id"], { encoding: "utf8" })),
    secondNode: await attempt(() => childProcess.execFileSync(process.execPath, ["-e", "setTimeout(() => console.log('second node'), 100)"], { encoding: "utf8", timeout: 10_000 })),
  };
}

export const fromMutation = mutation({ args: targets, handler: (_ctx, t) => probe(t) });
export const fromAction = action({ args: targets, handler: (_ctx, t) => probe(t) });

export const fetchFromAction = action({
  args: { urls: v.array(v.string()) },
  handler: async (_ctx, { urls }) => Promise.all(urls.map((url) => attempt(async () => (await fetch(url)).status))),
});
export const fetchFromMutation = mutation({ args: { url: v.string() }, handler: async (_ctx, { url }) => attempt(async () => (await fetch(url)).status) });

export const allocate = mutation({
  args: { bytes: v.number() },
  handler: async (_ctx, { bytes }) => {
    // Written to, so the pages are really taken (a zero-filled allocation is mapped lazily).
    const block = Buffer.allocUnsafe(bytes);
    block.fill(1);
    return block.length;
  },
});
export const killItself = mutation({ args: {}, handler: async () => process.kill(process.pid, "SIGKILL") });
export const ping = query({ args: {}, handler: async () => "pong" });
`;

type Outcome = { ok: true; value: string } | { ok: false; code: string; message: string };
interface Probe {
  uid: number;
  processes: string[];
  serverEnviron: Outcome;
  initEnviron: Outcome;
  secretsKey: Outcome;
  dataDir: Outcome;
  plantInDataDir: Outcome;
  plantInModules: Outcome;
  sandboxFile: Outcome;
  loopback: Outcome[];
  hostAddress: Outcome[];
  signalServer: Outcome;
  signalInit: Outcome;
  shell: Outcome;
  secondNode: Outcome;
}

const failedWith = (code: string | RegExp) => ({ ok: false, code: typeof code === "string" ? code : expect.stringMatching(code), message: expect.any(String) });

/** The machine's own non-loopback IPv4 address (where the service's ports also listen when bound to all addresses). */
const hostAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;

describe("the wall around pushed functions", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let client: ConvexHttpClient;
  let cwd: string;
  let dataDir: string;
  let sandboxFile: string;
  let ports: number[];

  beforeAll(async () => {
    emulator = await startTestEmulator({ functionTimeoutMs: { query: 10_000, mutation: 60_000, action: 60_000 } });
    project = await provisionManagedProject({ ...emulator.team, projectName: "wall app" }, emulator.management);
    client = new ConvexHttpClient(project.deploymentUrl);
    dataDir = getConfig().DATA_DIR;
    // Another user's sandbox, where the local driver keeps it.
    sandboxFile = path.join(dataDir, "sandboxes", "sandbox-b", "app", ".env.local");
    fs.mkdirSync(path.dirname(sandboxFile), { recursive: true });
    fs.writeFileSync(sandboxFile, "SECRET_OF_B=1\n");
    ports = [emulator.server.baseUrl, TEST_POSTGRES_URL, TEST_REDIS_URL, project.deploymentUrl].map((url) => Number(new URL(url).port || 5432));

    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "convex-wall-"));
    fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "wall-app", private: true, dependencies: { convex: "1.48.0" } }));
    fs.symlinkSync(path.resolve("node_modules"), path.join(cwd, "node_modules"), "dir");
    fs.mkdirSync(path.join(cwd, "convex"));
    fs.writeFileSync(path.join(cwd, "convex", "probes.ts"), PROBES);
    const { stdout, stderr } = await promisify(execFile)(CONVEX_BIN, ["dev", "--once", "--typecheck", "disable"], {
      cwd,
      env: { ...process.env, CONVEX_SELF_HOSTED_URL: project.deploymentUrl, CONVEX_SELF_HOSTED_ADMIN_KEY: project.token, CI: "1", NO_COLOR: "1" },
      timeout: 120_000,
    });
    expect(stdout + stderr).toContain("Convex functions ready!");
  }, 180_000);
  afterAll(async () => {
    await emulator?.server.close();
    if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
  });

  const targets = () => ({ serverPid: process.pid, dataDir, sandboxFile, ports, hostAddress: hostAddress ?? "127.0.0.1" });

  for (const kind of ["mutation", "action"] as const) {
    it(`from a ${kind}: no file, process, port or key of the service is reachable`, { timeout: 120_000 }, async () => {
      const probe = (kind === "mutation" ? await client.mutation(anyApi.probes.fromMutation, targets()) : await client.action(anyApi.probes.fromAction, targets())) as Probe;
      expect(probe.uid).toBe(65534);
      // Its own PID namespace: bubblewrap's init and the runner, none of the machine's processes.
      expect(probe.processes.map(Number).every((pid) => pid < 10)).toBe(true);
      expect(probe.serverEnviron).toEqual(failedWith("ENOENT"));
      expect(probe.initEnviron).toEqual(failedWith("EACCES"));
      expect(probe.secretsKey).toEqual(failedWith("ENOENT"));
      expect(probe.dataDir).toEqual(failedWith("ENOENT"));
      expect(probe.plantInDataDir).toEqual(failedWith("ENOENT"));
      expect(probe.plantInModules).toEqual(failedWith("EROFS"));
      expect(probe.sandboxFile).toEqual(failedWith("ENOENT"));
      // Its own network namespace: a loopback of its own where nothing listens, and no route out.
      expect(probe.loopback).toEqual(ports.map(() => failedWith("ECONNREFUSED")));
      if (hostAddress) expect(probe.hostAddress).toEqual(ports.map(() => failedWith("ENETUNREACH")));
      expect(probe.signalServer).toEqual(failedWith("ESRCH"));
      expect(probe.signalInit).toEqual(failedWith("EPERM"));
      // No shell in its file system, and no room in its pids cgroup for a second node.
      expect(probe.shell).toEqual(failedWith("ENOENT"));
      // The second node cannot start its threads: it never runs its code (it hangs until killed, or fails).
      expect(probe.secondNode).toEqual(failedWith(/^(ETIMEDOUT|EAGAIN|Error)$/));
      expect(probe.secondNode).not.toMatchObject({ message: expect.stringContaining("second node") });

      expect(fs.readFileSync(sandboxFile, "utf8")).toBe("SECRET_OF_B=1\n");
      expect(fs.existsSync(path.join(dataDir, "planted"))).toBe(false);
    });
  }

  it("an action's fetch reaches no address of this machine or its networks; a mutation cannot fetch", { timeout: 120_000 }, async () => {
    const apiPort = new URL(emulator.server.baseUrl).port;
    const inside = [
      `http://127.0.0.1:${apiPort}/`,
      `http://localhost:${apiPort}/`,
      `http://[::1]:${apiPort}/`,
      `http://[::ffff:127.0.0.1]:${apiPort}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.1/",
      "http://192.168.1.1/",
    ];
    const results = (await client.action(anyApi.probes.fetchFromAction, { urls: inside })) as Outcome[];
    expect(results).toEqual(inside.map(() => ({ ok: false, code: "TypeError", message: expect.stringMatching(/^fetch failed: connecting to .* is not allowed: .* is a loopback, private or link-local address$/) })));
    if (hostAddress) {
      const [own] = (await client.action(anyApi.probes.fetchFromAction, { urls: [`http://${hostAddress}:${apiPort}/`] })) as Outcome[];
      expect(own).toEqual({ ok: false, code: "TypeError", message: `fetch failed: connecting to ${hostAddress} is not allowed: ${hostAddress} is an address of this machine` });
    }
    expect(await client.mutation(anyApi.probes.fetchFromMutation, { url: `http://127.0.0.1:${apiPort}/` })).toEqual({
      ok: false,
      code: "Error",
      message: expect.stringContaining("`fetch` is not supported in Convex queries or mutations."),
    });
  });

  it("2 GB of off-heap memory stops the runner, not the service; the next call works", { timeout: 180_000 }, async () => {
    const rssBefore = process.memoryUsage().rss;
    await expect(client.mutation(anyApi.probes.allocate, { bytes: 2 * 1024 ** 3 })).rejects.toThrow("The function runtime stopped while the function ran.");
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(512 * 1024 ** 2);
    expect(await client.query(anyApi.probes.ping, {})).toBe("pong");
    // Within its limit, the same function works.
    expect(await client.mutation(anyApi.probes.allocate, { bytes: 16 * 1024 ** 2 })).toBe(16 * 1024 ** 2);
  });

  it("process.kill(process.pid, 'SIGKILL') ends only the runner; the next call works", { timeout: 120_000 }, async () => {
    await expect(client.mutation(anyApi.probes.killItself, {})).rejects.toThrow("The function runtime stopped while the function ran.");
    expect(await client.query(anyApi.probes.ping, {})).toBe("pong");
    const health = await fetch(emulator.server.baseUrl);
    expect(health.status).toBeLessThan(500);
  });
});
