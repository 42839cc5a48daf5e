// `npm start`: builds the app when the build is missing or older than the sources, then serves it
// (scripts/server.mjs).
import { spawnSync, spawn } from "node:child_process";
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

if (isStale()) {
  lockBuild();
  let status = 0;
  if (isStale()) {
    console.log(fs.existsSync(buildId) ? "Sources changed since the last build; rebuilding…" : "First start: building the app…");
    status = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" }).status ?? 1;
  }
  fs.rmSync(lockDir, { recursive: true, force: true });
  if (status !== 0) process.exit(status);
}

// The local sandbox service (packages/sandbox-local) runs beside the server once it is configured
// (SANDBOX_SERVICE_API_KEY, read from the environment or the .env files as the server reads them).
// It gets its own settings only: nothing of the server's secrets.
nextEnv.loadEnvConfig(root);
const sandboxService = process.env.SANDBOX_SERVICE_API_KEY
  ? // Under tsx: the wall module it imports (packages/sandbox-local/src/wall/) is TypeScript.
    spawn(process.execPath, ["--import", "tsx", path.join(root, "packages", "sandbox-local", "src", "main.mjs")], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name === "PATH" || name.startsWith("SANDBOX_"))),
    })
  : undefined;

const server = spawn(process.execPath, [path.join(root, "scripts", "server.mjs")], { cwd: root, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.kill(signal);
    sandboxService?.kill(signal);
  });
}
// A server ended by a signal (not by its own graceful shutdown) is a failure.
server.on("exit", (code) => {
  sandboxService?.kill("SIGTERM");
  process.exit(code ?? 1);
});
