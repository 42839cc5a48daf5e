// `npm start`: builds the app when the build is missing or older than the sources (installing the
// app toolchain meanwhile, scripts/prepare-toolchain.ts), then serves it (scripts/server.mjs).
// SIGINT or SIGTERM to this process stops whatever runs, as Ctrl-C to the whole group does.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import nextEnv from "@next/env";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const buildId = path.join(root, ".next", "BUILD_ID");
const sources = ["app", "lib", "templates", "supabase", "instrumentation.ts", "proxy.ts", "next.config.ts", "package.json", "tsconfig.json"];

function newestMtime(entry) {
  const stat = fs.statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(
    stat.mtimeMs,
    ...fs.readdirSync(entry).map((name) => newestMtime(path.join(entry, name))),
  );
}

const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
// The machine may have no internet; telemetry would only produce failed requests.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

function isStale() {
  const built = fs.statSync(buildId, { throwIfNoEntry: false });
  return !built || sources.some((source) => newestMtime(path.join(root, source)) > built.mtimeMs);
}

// Two starts at once (two instances, or test servers) must not build into the same `.next`
// together: the first builds under this lock, the others wait, then find the build fresh.
const lockDir = path.join(root, ".next-build.lock");
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** Takes the build lock; a lock whose holder died (or never wrote its pid) is taken over. */
function lockBuild() {
  let announced = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, "pid"), String(process.pid));
      return;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
    }
    let holder = 0;
    try {
      holder = Number(fs.readFileSync(path.join(lockDir, "pid"), "utf8"));
    } catch {
      // Not written yet, or the lock is gone already.
    }
    const lockAge = Date.now() - (fs.statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (holder ? !isAlive(holder) : lockAge > 30_000) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announced) console.log("Another start is building the app; waiting for it…");
    announced = true;
    sleep(500);
  }
}

/** Children to stop at SIGINT/SIGTERM; the toolchain install leads a process group of its own (npm under it). */
const children = { build: null, toolchain: null, server: null, sandboxService: null };
let stopping = false;
let holdsBuildLock = false;

function stopToolchainInstall(signal) {
  const install = children.toolchain;
  if (!install || install.exitCode !== null || install.signalCode !== null) return;
  try {
    process.kill(-install.pid, signal);
  } catch {
    // Gone already.
  }
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    // Ctrl-C signals the whole group, this process included: each child gets one signal.
    if (stopping) return;
    stopping = true;
    stopToolchainInstall("SIGTERM");
    children.sandboxService?.kill(signal);
    if (children.server) return children.server.kill(signal);
    children.build?.kill(signal);
    if (holdsBuildLock) fs.rmSync(lockDir, { recursive: true, force: true });
    process.exit(0);
  });
}

const exitOf = (child) => new Promise((resolve) => child.once("exit", (code) => resolve(code ?? 1)));

if (isStale()) {
  lockBuild();
  holdsBuildLock = true;
  let status = 0;
  if (isStale()) {
    console.log(fs.existsSync(buildId) ? "Sources changed since the last build; rebuilding…" : "First start: building the app…");
    // The toolchain install is mostly network and unpacking, the build mostly CPU: side by side.
    children.toolchain = spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts", "prepare-toolchain.ts")], { cwd: root, stdio: "inherit", detached: true });
    children.build = spawn(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" });
    status = await exitOf(children.build);
  }
  fs.rmSync(lockDir, { recursive: true, force: true });
  holdsBuildLock = false;
  if (status !== 0) {
    stopToolchainInstall("SIGTERM");
    process.exit(status);
  }
}

// With SANDBOX_DRIVER=local (the default) the local sandbox service (packages/sandbox-local, run
// by scripts/sandbox-service.ts) runs beside the server, which waits until it answers: the
// previews the server resumes at start live there. Its environment holds the settings it derives
// its own from, nothing of the server's secrets. A service that ends on its own is started again
// (its sandboxes come back as after a reboot; the server restarts their dev servers when needed).
nextEnv.loadEnvConfig(root);
const SERVICE_INPUTS = /^(PATH|HOME|NODE_ENV|PORT|DATA_DIR|APP_TOOLCHAIN_DIR|XDG_CACHE_HOME|EMULATOR_PORT_RANGE|SANDBOX_.*)$/;
const SERVICE_RESTART_DELAY_MS = 1_000;

function startSandboxService() {
  const service = spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts", "sandbox-service.ts")], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    env: Object.fromEntries(Object.entries(process.env).filter(([name]) => SERVICE_INPUTS.test(name))),
  });
  children.sandboxService = service;
  service.stdout.pipe(process.stdout);
  service.on("exit", (code, signal) => {
    // Exit code 2: its settings are wrong (it said which); starting it again would not help.
    if (stopping || code === 2) return;
    console.error(`The sandbox service ended (${signal ?? `exit code ${code}`}); starting it again…`);
    setTimeout(() => void startSandboxService(), SERVICE_RESTART_DELAY_MS);
  });
  // Its first line says it listens.
  return new Promise((resolve) => {
    service.stdout.once("data", resolve);
    service.once("exit", resolve);
  });
}

if ((process.env.SANDBOX_DRIVER || "local") === "local") await startSandboxService();

children.server = spawn(process.execPath, [path.join(root, "scripts", "server.mjs")], { cwd: root, stdio: "inherit" });
// A server ended by a signal (not by its own graceful shutdown) is a failure.
children.server.on("exit", (code) => {
  stopToolchainInstall("SIGTERM");
  children.sandboxService?.kill("SIGTERM");
  process.exit(code ?? 1);
});
