import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** The cgroup v1 controllers a sandbox gets, each under the service's own cgroup of that controller. */
const CONTROLLERS = ["memory", "pids", "cpu", "freezer"] as const;
type Controller = (typeof CONTROLLERS)[number];

const CGROUP_ROOT = "/sys/fs/cgroup";
/** Folder under the service's cgroups that holds one cgroup per sandbox. */
const SANDBOXES = "sandboxes";
/** Waits sized for a loaded 2-core machine: freezing or emptying a cgroup of a busy sandbox can take seconds. */
const SETTLE_TIMEOUT_MS = 30_000;
const SETTLE_POLL_MS = 20;

export interface CgroupLimits {
  memoryBytes: number;
  maxProcesses: number;
  cpuShares: number;
}

/** The cgroup (v1 hierarchy, mount folder and path inside it) of this process for each controller. */
async function ownCgroups(): Promise<Record<Controller, string>> {
  const found: Partial<Record<Controller, string>> = {};
  for (const line of (await fs.readFile("/proc/self/cgroup", "utf8")).split("\n")) {
    const [, hierarchy, cgroupPath] = line.split(":");
    if (!hierarchy || cgroupPath === undefined) continue;
    for (const controller of hierarchy.split(",")) {
      if ((CONTROLLERS as readonly string[]).includes(controller)) {
        found[controller as Controller] = path.join(CGROUP_ROOT, hierarchy, cgroupPath);
      }
    }
  }
  const missing = CONTROLLERS.filter((controller) => !found[controller]);
  if (missing.length > 0) throw new Error(`cgroup v1 controllers not mounted: ${missing.join(", ")}`);
  return found as Record<Controller, string>;
}

/** Where the sandboxes' cgroups of each controller live (created if missing). */
export async function sandboxesParents(): Promise<Record<Controller, string>> {
  const own = await ownCgroups();
  const parents = {} as Record<Controller, string>;
  for (const controller of CONTROLLERS) {
    parents[controller] = path.join(own[controller], SANDBOXES);
    await fs.mkdir(parents[controller], { recursive: true });
  }
  return parents;
}

async function readNumberField(file: string, field: string): Promise<number> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  const line = text.split("\n").find((l) => l.startsWith(`${field} `));
  return line ? Number(line.slice(field.length + 1)) : 0;
}

async function until(what: string, test: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`sandbox cgroup: timed out waiting for ${what}`);
    await sleep(SETTLE_POLL_MS);
  }
}

/** One sandbox's cgroups: its limits, freezing, its processes and what it ran into. */
export class SandboxCgroups {
  private constructor(private readonly dirs: Record<Controller, string>) {}

  /** Creates the sandbox's cgroups with its limits; fails when a sandbox of this id already has them. */
  static async create(id: string, limits: CgroupLimits): Promise<SandboxCgroups> {
    const parents = await sandboxesParents();
    const dirs = {} as Record<Controller, string>;
    for (const controller of CONTROLLERS) dirs[controller] = path.join(parents[controller], id);
    const cgroups = new SandboxCgroups(dirs);
    if ((await cgroups.pids()).length > 0) throw new Error(`sandbox ${id} is already running`);
    // Left by a service that died before removing them: empty, so nothing of a live sandbox is lost.
    await cgroups.remove();
    try {
      for (const controller of CONTROLLERS) await fs.mkdir(dirs[controller]);
      await cgroups.write("memory", "memory.limit_in_bytes", limits.memoryBytes);
      // Memory plus swap gets the same limit, so a sandbox cannot spill into swap (absent without swap accounting).
      await cgroups.write("memory", "memory.memsw.limit_in_bytes", limits.memoryBytes).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
      await cgroups.write("pids", "pids.max", limits.maxProcesses);
      await cgroups.write("cpu", "cpu.shares", limits.cpuShares);
    } catch (error) {
      await cgroups.remove().catch(() => undefined);
      throw error;
    }
    return cgroups;
  }

  /** The files a launcher writes its own pid into to enter every cgroup of the sandbox. */
  get procsFiles(): string[] {
    return CONTROLLERS.map((controller) => path.join(this.dirs[controller], "cgroup.procs"));
  }

  private write(controller: Controller, file: string, value: number | string): Promise<void> {
    return fs.writeFile(path.join(this.dirs[controller], file), String(value));
  }

  private read(controller: Controller, file: string): Promise<string> {
    return fs.readFile(path.join(this.dirs[controller], file), "utf8");
  }

  private async pids(): Promise<number[]> {
    const text = await this.read("freezer", "cgroup.procs").catch(() => "");
    return text.split("\n").filter(Boolean).map(Number);
  }

  async freeze(): Promise<void> {
    await this.write("freezer", "freezer.state", "FROZEN");
    await until("the sandbox to freeze", async () => (await this.read("freezer", "freezer.state")).trim() === "FROZEN");
  }

  async thaw(): Promise<void> {
    await this.write("freezer", "freezer.state", "THAWED");
    await until("the sandbox to thaw", async () => (await this.read("freezer", "freezer.state")).trim() === "THAWED");
  }

  /** Current memory use of every process of the sandbox together. */
  async memoryBytes(): Promise<number> {
    return Number((await this.read("memory", "memory.usage_in_bytes")).trim());
  }

  /** Which limit the sandbox ran into, if any: the OOM killer acted, or a fork was refused at the process limit. */
  async limitReached(): Promise<"memory" | "processes" | undefined> {
    if ((await readNumberField(path.join(this.dirs.memory, "memory.oom_control"), "oom_kill")) > 0) return "memory";
    if ((await readNumberField(path.join(this.dirs.pids, "pids.events"), "max")) > 0) return "processes";
    return undefined;
  }

  /**
   * Kills every process of the sandbox. Frozen first, so a fork bomb cannot make new processes
   * between the listing and the signals; SIGKILL is delivered when thawed.
   */
  async killAll(): Promise<void> {
    if ((await this.pids()).length === 0) return;
    await this.freeze();
    for (const pid of await this.pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await this.thaw();
    await until("the sandbox's processes to end", async () => (await this.pids()).length === 0);
  }

  /** Removes the (empty) cgroups; missing ones are fine. */
  async remove(): Promise<void> {
    for (const controller of CONTROLLERS) {
      // An exited process leaves its cgroup a moment after it is reaped.
      await until(`cgroup ${controller} to be removable`, async () => {
        try {
          await fs.rmdir(this.dirs[controller]);
          return true;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT") return true;
          if (code === "EBUSY") return false;
          throw error;
        }
      });
    }
  }
}
