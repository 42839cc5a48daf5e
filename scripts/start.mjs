// `npm start`: builds the app when the build is missing or older than the sources, then serves it
// (scripts/server.mjs).
import { spawnSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

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

const built = fs.statSync(buildId, { throwIfNoEntry: false });
const stale = !built || sources.some((source) => newestMtime(path.join(root, source)) > built.mtimeMs);
const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
// The machine may have no internet; telemetry would only produce failed requests.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

if (stale) {
  console.log(built ? "Sources changed since the last build; rebuilding…" : "First start: building the app…");
  const result = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const server = spawn(process.execPath, [path.join(root, "scripts", "server.mjs")], { cwd: root, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
