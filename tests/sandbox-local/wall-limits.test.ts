import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { type WalledProcess, type WallSpec } from "@/packages/sandbox-local/src/wall";
import { sandboxesParents } from "@/packages/sandbox-local/src/wall/cgroups";
import { ECHO_SERVER, echoOver, eventually, outputOf, wallScratch } from "./wall-fixture";

const scratch = wallScratch("wall-limits");

/** Sandbox B: an echo server on its runtime directory's socket, which must keep answering while A misbehaves. */
let specB: WallSpec;
let sandboxB: WalledProcess;
const echoB = (line: string) => echoOver(path.join(specB.runtimeDir, "echo.sock"), line);

async function cgroupsOf(id: string): Promise<string[]> {
  return Object.values(await sandboxesParents())
    .map((parent) => path.join(parent, id))
    .filter((dir) => fs.existsSync(dir));
}

beforeAll(async () => {
  specB = scratch.spec("limits-b");
  sandboxB = await scratch.start(["node", "-e", ECHO_SERVER], specB);
  await eventually("B's echo", () => echoB("ping"));
});

describe("the sandbox wall's limits", () => {
  it("stops a fork bomb at the process limit and reports it; B and this process keep answering", async () => {
    const spec = scratch.spec("limits-forks", { limits: { memoryBytes: 512 * 1024 ** 2, maxProcesses: 64 } });
    // The first process stays (exec, no fork) while the bomb grows: the sandbox ends with its first
    // process, and a shell that returned first (`wait` does once its own job ended) ended the race
    // before the bomb reached the limit on some runs.
    const bomb = await scratch.start(["/bin/bash", "-c", ":(){ :|:& };:; exec sleep 600"], spec);
    const ticks = { count: 0 };
    const ticker = setInterval(() => ticks.count++, 10);
    const { exit } = await outputOf(bomb);
    clearInterval(ticker);
    expect(exit.limit).toBe("processes");
    expect(ticks.count).toBeGreaterThan(0);
    expect(await echoB("after the fork bomb")).toBe("after the fork bomb");
    expect(await cgroupsOf(spec.id)).toEqual([]);
  });

  it("stops a 20 GB allocation at the memory limit and reports it; B keeps answering", async () => {
    const spec = scratch.spec("limits-memory", { limits: { memoryBytes: 256 * 1024 ** 2, maxProcesses: 64 } });
    // Off-heap buffers filled byte by byte: every page is touched, 100 MB at a time, up to 20 GB.
    const hog = await scratch.start(["node", "-e", "const kept = []; for (let i = 0; i < 200; i++) kept.push(Buffer.alloc(100 * 2 ** 20, 1)); console.log('allocated', kept.length)"], spec);
    const { stdout, exit } = await outputOf(hog);
    expect(stdout).not.toContain("allocated");
    expect(exit).toMatchObject({ signal: "SIGKILL", limit: "memory" });
    expect(await echoB("after the memory hog")).toBe("after the memory hog");
    expect(await cgroupsOf(spec.id)).toEqual([]);
  });

  it("freezes and thaws every process of a sandbox", async () => {
    const spec = scratch.spec("limits-freeze");
    const counterFile = path.join(spec.home, "count");
    const counter = await scratch.start(
      ["node", "-e", "let n = 0; setInterval(() => require('node:fs').writeFileSync('/home/user/count.tmp', String(++n)) || require('node:fs').renameSync('/home/user/count.tmp', '/home/user/count'), 20)"],
      spec,
    );
    const count = () => (fs.existsSync(counterFile) ? Number(fs.readFileSync(counterFile, "utf8")) : 0);
    await eventually("the counter to run", () => (count() > 0 ? true : undefined));
    expect(await counter.memoryBytes()).toBeGreaterThan(0);

    await counter.freeze();
    const frozenAt = count();
    // No progress while frozen: given ample time, a running counter would have advanced many times.
    await sleep(2_000);
    expect(count()).toBe(frozenAt);

    await counter.thaw();
    await eventually("the counter to advance after thaw", () => (count() > frozenAt ? true : undefined));

    await counter.kill();
    await counter.kill();
    expect(await counter.exited).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(await cgroupsOf(spec.id)).toEqual([]);
    expect(await echoB("after the freezer")).toBe("after the freezer");
  });

  it("never stopped B", async () => {
    expect(await Promise.race([sandboxB.exited, sleep(100).then(() => "running")])).toBe("running");
  });
});
