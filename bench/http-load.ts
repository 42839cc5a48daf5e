/**
 * HTTP load from another process: wrk (Debian package `wrk`, installed by `.ci/bench-setup`), so
 * the servers a bench compares get the machine's other core and no client shares their event
 * loop. A client in the bench's own process is slower than a plain Node server: it flattered
 * every server it measured against one (issue 42).
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface LoadTarget {
  /** `http://host:port` of the server. */
  origin: string;
  /** Request paths, sent in turn by every connection. */
  paths: string[];
  /** wrk sends no body: POST is for `runBatch`. */
  method?: "GET" | "HEAD" | "POST";
  headers?: Record<string, string>;
  /** Request bodies, one file each, for `runBatch`: its n-th connection sends the n-th. */
  bodyFiles?: string[];
  /** The server's processes, whose CPU time is counted while it is under load. */
  pids(): number[];
}

export interface LoadFigures {
  requests: number;
  seconds: number;
  /** Answers with status >= 400, socket errors and timeouts. */
  failures: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time the server's processes spent meanwhile: unlike req/s, it hardly depends on what else runs on the machine. */
  serverCpuSeconds: number;
}

export const requestsPerSecond = (figures: LoadFigures) => figures.requests / figures.seconds;

/** Server CPU time per request, in microseconds. */
export const cpuMicrosPerRequest = (figures: LoadFigures) => (1e6 * figures.serverCpuSeconds) / figures.requests;

/**
 * The line under a service's and its plain Node reference's figures: the ratio of their
 * throughputs (the goal), of their throughputs per server CPU second, and the load averages.
 */
export function ratioLine(service: LoadFigures, plain: LoadFigures, unit: string, loadAverages: string[]): string {
  const percent = (part: number, whole: number) => ((100 * part) / whole).toFixed(0);
  return (
    `ratio: ${percent(requestsPerSecond(service), requestsPerSecond(plain))} % of plain Node's ${unit}/s (goal >= 80 %), ` +
    `${percent(cpuMicrosPerRequest(plain), cpuMicrosPerRequest(service))} % of its ${unit} per CPU second; load average per round ${loadAverages.join(", ")}`
  );
}

/** The 1-minute load average, as printed beside every figure. */
export const loadAverage = () => os.loadavg()[0].toFixed(1);

/** Fails early, with what to run, when wrk is missing. */
export function requireWrk(): void {
  if (spawnSync("wrk", ["--version"]).error) {
    throw new Error("The benches need wrk in PATH: run `.ci/bench-setup` (apt-get install wrk).");
  }
}

const TICKS_PER_SECOND = 100;

/** User and system CPU time of processes, their reaped children's included (Linux /proc). */
function cpuSecondsOf(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the parenthesised command name: utime, stime, cutime, cstime are the 12th to 15th.
      const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    } catch {
      // Exited meanwhile.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** CPU time the processes spend per second while no request arrives (timers, pollers), in milliseconds. */
export async function restingCpuMillisPerSecond(pids: number[], seconds: number): Promise<number> {
  const cpuBefore = cpuSecondsOf(pids);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return ((cpuSecondsOf(pids) - cpuBefore) * 1000) / seconds;
}

/** The processes whose environment has `name=value` (a server and its children, found by their own DATA_DIR). */
export function pidsWithEnv(name: string, value: string): number[] {
  const entry = `${name}=${value}`;
  return fs.readdirSync("/proc").flatMap((pid) => {
    if (!/^\d+$/.test(pid)) return [];
    try {
      return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry) ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

const luaString = (value: string) => JSON.stringify(value);

/**
 * The wrk script: requests prepared once in `init` (wrk's per-request `request()` then only picks
 * one), and the totals printed as JSON by `done`.
 */
function wrkScript(target: LoadTarget): string {
  const method = luaString(target.method ?? "GET");
  const headers = Object.entries(target.headers ?? {})
    .map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`)
    .join(", ");
  return `
local paths = { ${target.paths.map(luaString).join(", ")} }
local requests = {}
local turn = 0
function init(args)
  for i, path in ipairs(paths) do requests[i] = wrk.format(${method}, path, { ${headers} }) end
  -- Connections start at different files, as independent clients would.
  turn = math.random(#requests) - 1
end
function request()
  turn = turn % #requests + 1
  return requests[turn]
end
function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"micros":%d,"failures":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, errors.connect + errors.read + errors.write + errors.status + errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/** `connections` keep-alive connections on one wrk thread for `seconds`, each sending its next request when the previous answer is read. */
export async function runWrk(target: LoadTarget, connections: number, seconds: number): Promise<LoadFigures> {
  const scriptDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-wrk-"));
  const script = path.join(scriptDir, "load.lua");
  fs.writeFileSync(script, wrkScript(target));
  try {
    const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "60s", "-s", script, target.origin];
    const pids = target.pids();
    const cpuBefore = cpuSecondsOf(pids);
    const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", resolve);
    });
    const serverCpuSeconds = cpuSecondsOf(pids) - cpuBefore;
    const match = /RESULT (\{.*\})/.exec(output);
    if (code !== 0 || !match) throw new Error(`wrk failed (exit ${code}):\n${output}`);
    const result = JSON.parse(match[1]) as { requests: number; micros: number; failures: number; p50: number; p99: number };
    return { requests: result.requests, seconds: result.micros / 1e6, failures: result.failures, p50Ms: result.p50 / 1000, p99Ms: result.p99 / 1000, serverCpuSeconds };
  } finally {
    fs.rmSync(scriptDir, { recursive: true, force: true });
  }
}

/** Several stretches of one target as one: requests and time summed, latencies of the worst stretch. */
function combine(stretches: LoadFigures[]): LoadFigures {
  const sum = (pick: (figures: LoadFigures) => number) => stretches.reduce((total, figures) => total + pick(figures), 0);
  return {
    requests: sum((figures) => figures.requests),
    seconds: sum((figures) => figures.seconds),
    failures: sum((figures) => figures.failures),
    serverCpuSeconds: sum((figures) => figures.serverCpuSeconds),
    p50Ms: Math.max(...stretches.map((figures) => figures.p50Ms)),
    p99Ms: Math.max(...stretches.map((figures) => figures.p99Ms)),
  };
}

/**
 * Measures the targets in alternation, `rounds` times each after a warm-up of each, so a burst of
 * load from elsewhere on the machine falls on all of them alike. Returns each target's figures
 * over all its rounds and the load averages seen at the start of each round.
 */
export async function interleaved<Name extends string>(
  targets: Record<Name, LoadTarget>,
  options: { rounds: number; measure(target: LoadTarget): Promise<LoadFigures>; warmUp(target: LoadTarget): Promise<unknown> },
): Promise<{ figures: Record<Name, LoadFigures>; loadAverages: string[] }> {
  const names = Object.keys(targets) as Name[];
  for (const name of names) await options.warmUp(targets[name]);
  const stretches = new Map<Name, LoadFigures[]>(names.map((name) => [name, []]));
  const loadAverages: string[] = [];
  for (let round = 0; round < options.rounds; round++) {
    loadAverages.push(loadAverage());
    // Each round starts with the other target, so neither always runs right after a warm-up.
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) stretches.get(name)!.push(await options.measure(targets[name]));
  }
  const figures = Object.fromEntries(names.map((name) => [name, combine(stretches.get(name)!)])) as Record<Name, LoadFigures>;
  return { figures, loadAverages };
}

/**
 * Exactly `connections × perConnection` requests from a node process of its own
 * (bench/batch-client.mjs), the connections in parallel: for large uploads, which wrk's fixed
 * duration would cut off mid-body while the server's CPU time for them is already counted.
 */
export async function runBatch(target: LoadTarget, connections: number, perConnection: number): Promise<LoadFigures> {
  const pids = target.pids();
  const cpuBefore = cpuSecondsOf(pids);
  const options = { ...target, path: target.paths[0], connections, perConnection };
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "batch-client.mjs"), JSON.stringify(options)], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`The batch client failed (exit ${code}): ${output}`);
  const serverCpuSeconds = cpuSecondsOf(pids) - cpuBefore;
  const result = JSON.parse(output) as { ms: number; latencies: number[]; failures: number };
  const latencies = result.latencies.sort((a, b) => a - b);
  const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))];
  return { requests: latencies.length, seconds: result.ms / 1000, failures: result.failures, p50Ms: at(0.5), p99Ms: at(0.99), serverCpuSeconds };
}

/** The reference server (bench/plain-node-server.mjs) in its own process, answering once it listens. */
export async function startPlainServer(mode: "static" | "upload", root: string): Promise<{ origin: string; pid: number; stop(): void }> {
  const script = path.join(import.meta.dirname, "plain-node-server.mjs");
  // A session of its own, like the `npm start` server's (tests/e2e/server.ts): with the kernel's
  // autogroup scheduling, each session gets a fair share of the CPU, so sharing wrk's would halve it.
  const child = spawn(process.execPath, [script, mode, root], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (chunk: Buffer) => resolve(Number(/ready (\d+)/.exec(chunk.toString())![1])));
    child.once("exit", (code) => reject(new Error(`The plain server exited (${code})`)));
  });
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill() };
}
