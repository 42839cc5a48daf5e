import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

/**
 * Operating-system process helpers of the local driver. Linux answers precisely through /proc
 * (zombies count as gone: a container's PID 1 does not always reap orphans); elsewhere they fall
 * back to signal 0, which cannot tell a zombie from a live process.
 */

const HAS_PROC = existsSync("/proc/self/stat");

interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  zombie: boolean;
}

async function readStat(pid: number): Promise<ProcStat | null> {
  const text = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (!text) return null;
  // "pid (comm) state ppid pgrp ...": comm may itself contain spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), zombie: fields[0] === "Z" || fields[0] === "X" };
}

async function listProcStats(): Promise<ProcStat[]> {
  const names = await fs.readdir("/proc");
  const stats = await Promise.all(names.filter((name) => /^\d+$/.test(name)).map((name) => readStat(Number(name))));
  return stats.filter((stat): stat is ProcStat => stat !== null && !stat.zombie);
}

function signalZeroSucceeds(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** `true` while the process exists and is not a zombie. */
export async function isProcessAlive(pid: number): Promise<boolean> {
  if (!HAS_PROC) return signalZeroSucceeds(pid);
  const stat = await readStat(pid);
  return stat !== null && !stat.zombie;
}

function sendKill(target: number): void {
  try {
    process.kill(target, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** Sends SIGKILL to a whole process group; a group that is already gone is not an error. */
export const killProcessGroup = (pgid: number): void => sendKill(-pgid);

/** Sends SIGKILL to one process; a process that is already gone is not an error. */
export const killProcess = (pid: number): void => sendKill(pid);

/** A live process and its environment. */
export interface MarkedProcess {
  pid: number;
  /** Its parent's pid. */
  ppid: number;
  /** Its command line, arguments joined by spaces. */
  cmdline: string;
  env: Record<string, string>;
}

/**
 * Live processes whose environment contains `marker` (`NAME=value`), other than this one.
 * Finds what escaped the process groups (`setsid`) and what another server process started.
 * Always empty without /proc.
 */
export async function findProcessesWithEnv(marker: string): Promise<MarkedProcess[]> {
  if (!HAS_PROC) return [];
  const found: MarkedProcess[] = [];
  for (const { pid, ppid } of await listProcStats()) {
    if (pid === process.pid) continue;
    const entries = (await fs.readFile(`/proc/${pid}/environ`, "utf8").catch(() => "")).split("\0");
    if (!entries.includes(marker)) continue;
    const env = Object.fromEntries(entries.filter((entry) => entry.includes("=")).map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
    const cmdline = (await fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0").filter(Boolean).join(" ");
    found.push({ pid, ppid, cmdline, env });
  }
  return found;
}

/** The pids of {@link findProcessesWithEnv}. */
export async function findProcessesByEnv(marker: string): Promise<number[]> {
  return (await findProcessesWithEnv(marker)).map((found) => found.pid);
}

/** Live pids among `pids`, plus `groups` that still have a live member. */
async function survivors(pids: number[], groups: number[]): Promise<number> {
  if (!HAS_PROC) return [...pids, ...groups.map((pgid) => -pgid)].filter(signalZeroSucceeds).length;
  const live = await listProcStats();
  return live.filter((stat) => pids.includes(stat.pid) || groups.includes(stat.pgid)).length;
}

/**
 * Waits until the given processes and process groups are gone (SIGKILL is asynchronous).
 * Throws when they outlive `timeoutMs`, which would mean they could not be killed.
 */
export async function waitUntilGone(pids: number[], groups: number[], timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let pause = 5;
  while ((await survivors(pids, groups)) > 0) {
    if (Date.now() > deadline) throw new Error(`Processes still running after ${timeoutMs} ms: ${[...pids, ...groups]}`);
    await delay(pause);
    pause = Math.min(pause * 2, 100);
  }
}
