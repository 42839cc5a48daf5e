// STAND-IN for the wall (src/wall/, built by another helper to the same `startWalled` signature;
// the coordinator swaps the import in sandboxes.mjs). It gives a sandbox what the service's
// protocol needs (its home at /home/user, its runtime directory at /run/sandbox, its own PID
// namespace and /proc, its own loopback network, a clean environment) but none of the wall's
// protection: the host's filesystem stays visible and writable, no other user, no cgroup limits.
import { spawn } from "node:child_process";
import fs from "node:fs/promises";

const descendantsOf = async (root) => {
  const parents = new Map();
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, "utf8").catch(() => null);
    if (stat) parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
  }
  const found = [];
  const visit = (pid) => {
    for (const [child, parent] of parents) {
      if (parent === pid) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(root);
  return found;
};

const signalAll = async (root, signal) => {
  for (const pid of [root, ...(await descendantsOf(root))]) {
    try {
      process.kill(pid, signal);
    } catch {
      // Ended meanwhile.
    }
  }
};

/** @param {string[]} argv @param {import("./wall-types").WallSpec} spec */
export async function startWalled(argv, spec) {
  const args = ["--dev-bind", "/", "/", "--proc", "/proc", "--tmpfs", "/home", "--tmpfs", "/run", "--tmpfs", "/tmp"];
  args.push("--bind", spec.home, "/home/user", "--bind", spec.runtimeDir, "/run/sandbox");
  for (const { host, sandbox } of spec.readOnly ?? []) args.push("--ro-bind", host, sandbox);
  args.push("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--clearenv");
  for (const [name, value] of Object.entries(spec.env)) args.push("--setenv", name, value);
  args.push("--chdir", spec.cwd ?? "/home/user", "--", ...argv);
  const child = spawn("bwrap", args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  return {
    pid: child.pid,
    stdout: child.stdout,
    stderr: child.stderr,
    exited,
    freeze: () => signalAll(child.pid, "SIGSTOP"),
    thaw: () => signalAll(child.pid, "SIGCONT"),
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await signalAll(child.pid, "SIGCONT");
      child.kill("SIGKILL");
      await exited;
    },
    async memoryBytes() {
      let total = 0;
      for (const pid of [child.pid, ...(await descendantsOf(child.pid))]) {
        const status = await fs.readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
        total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      }
      return total;
    },
  };
}
