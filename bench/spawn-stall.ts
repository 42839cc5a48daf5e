/**
 * Event-loop delay of a big server process while sandbox commands run: the local driver's
 * commands (spawned by its command host) against the same commands spawned by this process with
 * `child_process.spawn`, as the driver did before, and against the loop left idle; all in one
 * run, after the process was grown to about `heapMiB` of live memory to emulate the server's
 * resident size (fork copies page tables in proportion to it). "lost ms/s" is how late the loop
 * ran in all, per second: a stall is one long sample, which percentiles can hide.
 * Run: npx tsx bench/spawn-stall.ts [heapMiB=450] [rounds=10] [concurrent=10]
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { createLocalSandboxProvider } from "@/lib/sandbox/drivers/local";

const HEAP_MIB = Number(process.argv[2] ?? 450);
const ROUNDS = Number(process.argv[3] ?? 10);
const CONCURRENT = Number(process.argv[4] ?? 10);
/** Long enough that the 10 commands overlap, short enough for many rounds. */
const COMMAND = "sleep 0.05; echo done";
const GOAL_P99_MS = 5;
const MONITOR_WARM_UP_MS = 10;
const RESOLUTION_MS = 1;

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;
const ms = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(2);

/**
 * Live memory the bench holds to the end, every page written to: half on the JS heap, half in
 * buffers. The heap half is arrays of numbers, so that garbage collection (cheap to mark) does
 * not add pauses of its own to what spawning costs.
 */
function growProcess(targetMiB: number): unknown[] {
  const held: unknown[] = [];
  for (let i = 0; i < targetMiB / 2; i++) held.push(new Array<number>(2 ** 17).fill(i + 0.5));
  for (let i = 0; i < targetMiB / 2; i++) held.push(Buffer.alloc(2 ** 20).fill(i & 0xff));
  return held;
}

/** Time this process spent blocked inside `spawn()` calls, and how many. */
const blocked = { ms: 0, calls: 0 };

function spawnDirectly(): Promise<void> {
  return new Promise((resolve, reject) => {
    const before = performance.now();
    const child = spawn("/bin/bash", ["-c", COMMAND], { detached: true, stdio: ["pipe", "pipe", "pipe"] });
    blocked.ms += performance.now() - before;
    blocked.calls++;
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

interface Phase {
  histogram: IntervalHistogram;
  elapsedMs: number;
}

/**
 * The loop's delay while `rounds` rounds run back to back, on a monitor of its own (a re-enabled
 * monitor would count the time it was disabled as one long delay). The rounds start once the
 * monitor has ticked: a stall before its first tick would go unrecorded.
 */
async function measure(rounds: number, round: () => Promise<unknown>): Promise<Phase> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  await delay(MONITOR_WARM_UP_MS);
  const started = performance.now();
  for (let i = 0; i < rounds; i++) await round();
  const elapsedMs = performance.now() - started;
  histogram.disable();
  return { histogram, elapsedMs };
}

const root = await fs.mkdtemp(path.join(os.tmpdir(), "spawn-stall-"));
// As at server start: the provider (and with it the command host) exists before the process grows.
const provider = createLocalSandboxProvider({ root });
const sandbox = await provider.create();
await sandbox.commands.run("true");

const rssBefore = process.memoryUsage().rss;
const held = growProcess(HEAP_MIB);
const rssAfter = process.memoryUsage().rss;

const concurrently = (start: () => Promise<unknown>) => () => Promise.all(Array.from({ length: CONCURRENT }, start));
const idle = await measure(1, () => delay(1_000));
const hosted = await measure(ROUNDS, concurrently(() => sandbox.commands.run(COMMAND)));
const direct = await measure(ROUNDS, concurrently(spawnDirectly));

await provider.kill(sandbox.sandboxId);
await fs.rm(root, { recursive: true, force: true });

/** Milliseconds per second the loop was late beyond the monitor's resolution. */
const lostPerSecond = ({ histogram, elapsedMs }: Phase) => ((histogram.mean / 1e6 - RESOLUTION_MS) * histogram.count) / (elapsedMs / 1_000);
const row = (name: string, phase: Phase) =>
  [
    name.padEnd(44),
    ms(phase.histogram.percentile(50)).padStart(7),
    ms(phase.histogram.percentile(99)).padStart(7),
    ms(phase.histogram.max).padStart(8),
    lostPerSecond(phase).toFixed(1).padStart(10),
  ].join(" ");
const p99 = (phase: Phase) => phase.histogram.percentile(99) / 1e6;
console.log(
  [
    `process RSS ${mib(rssBefore)} → ${mib(rssAfter)} (grown by ${HEAP_MIB} MiB, ${held.length} live allocations)`,
    `${ROUNDS} rounds of ${CONCURRENT} concurrent commands (\`${COMMAND}\`) per phase, one phase after the other`,
    "",
    `${"event-loop delay, ms".padEnd(44)} ${"p50".padStart(7)} ${"p99".padStart(7)} ${"max".padStart(8)} ${"lost ms/s".padStart(10)}`,
    row("idle loop (machine noise, reference)", idle),
    row("spawned by this process (before, reference)", direct),
    row("sandbox commands via the command host (now)", hosted),
    `one spawn() blocks this process ${(blocked.ms / blocked.calls).toFixed(2)} ms on average (${blocked.calls} calls)`,
    "",
    `p99 now ${p99(hosted).toFixed(2)} ms against ${p99(direct).toFixed(2)} ms before (goal < ${GOAL_P99_MS} ms): ${p99(hosted) < GOAL_P99_MS ? "met" : "NOT met"}`,
  ].join("\n"),
);
