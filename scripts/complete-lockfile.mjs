// The npm registry this project is installed from lacks some platform-only optional packages
// (e.g. @next/swc-darwin-arm64). `npm install` then leaves them out of package-lock.json and
// `npm ci` refuses the lock as out of sync. This adds a platform-tagged entry for each, which
// `npm ci` skips on other platforms without fetching it. Run after `npm install` changed the lock:
//   node scripts/complete-lockfile.mjs
import { execFileSync } from "node:child_process";
import fs from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(fs.readFileSync(lockPath, "utf8"));

let report = "";
try {
  execFileSync("npm", ["ci", "--dry-run", "--ignore-scripts"], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
} catch (error) {
  report = String(error.stderr ?? "");
}
const missing = [...new Set([...report.matchAll(/Missing: (@?[^@\s]+)@/g)].map((match) => match[1]))];

const OS = ["darwin", "win32", "linux", "android", "freebsd", "openharmony", "sunos", "aix"];
const CPU = ["arm64", "x64", "ia32", "arm", "loong64", "ppc64", "riscv64", "s390x", "wasm32"];

for (const name of missing) {
  const parent = Object.values(lock.packages).find((info) => info.optionalDependencies?.[name]);
  if (!parent) {
    console.error(`no package lists ${name} as optional; fix the lock by hand`);
    process.exitCode = 1;
    continue;
  }
  const base = name.split("/").pop();
  const parts = base.split("-");
  const os = OS.find((candidate) => parts.includes(candidate));
  const cpu = CPU.find((candidate) => parts.includes(candidate));
  const libc = base.includes("musl") ? "musl" : os === "linux" && base.includes("gnu") ? "glibc" : undefined;
  lock.packages[`node_modules/${name}`] = {
    version: parent.optionalDependencies[name].replace(/^[\^~=]/, ""),
    optional: true,
    ...(cpu && { cpu: [cpu] }),
    ...(libc && { libc: [libc] }),
    ...(os && { os: [os] }),
  };
  console.log(`added ${name}`);
}

lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)));
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
