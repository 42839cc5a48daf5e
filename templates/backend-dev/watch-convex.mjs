// The local backend dev server: watches the app's functions folder and, after every change, runs
// the real convex CLI's offline code generation and type check
// (`npx convex codegen --system-udfs --typecheck enable`), which writes convex/_generated/ and
// prints tsc's errors with file and line. It needs no deployment and no network. Hosted projects
// run `npx convex dev` instead, which also pushes.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const appDir = process.cwd();
const POLL_MS = 400;
const IGNORED = new Set(["_generated", "node_modules"]);

function functionsDir() {
  try {
    const config = JSON.parse(fs.readFileSync(path.join(appDir, "convex.json"), "utf8"));
    if (typeof config.functions === "string") return path.join(appDir, config.functions);
  } catch {
    // No or unreadable convex.json: the CLI's default folder.
  }
  return path.join(appDir, "convex");
}

/** Paths with size and mtime of every source file: equal fingerprints mean nothing changed. */
function fingerprint(dir) {
  const parts = [];
  const visit = (current) => {
    let entries;
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (IGNORED.has(entry.name) || entry.name.startsWith(".")) continue;
      const child = path.join(current, entry.name);
      if (entry.isDirectory()) visit(child);
      else {
        const stat = fs.statSync(child, { throwIfNoEntry: false });
        if (stat) parts.push(`${child}:${stat.size}:${stat.mtimeMs}`);
      }
    }
  };
  visit(dir);
  return parts.join("\n");
}

function check() {
  return new Promise((resolve) => {
    const child = spawn("npx", ["convex", "codegen", "--system-udfs", "--typecheck", "enable"], { cwd: appDir, stdio: "inherit" });
    child.once("error", (error) => {
      console.error(`✖ Could not run the convex CLI: ${error.message}`);
      resolve(1);
    });
    child.once("exit", (code) => resolve(code ?? 1));
  });
}

const dir = functionsDir();
const shown = path.relative(appDir, dir);
let seen = null;
for (;;) {
  const current = fingerprint(dir);
  if (current !== seen) {
    seen = current;
    const started = Date.now();
    const code = await check();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    // The ✔ line is the success mark the server's log scanner turns into a "resolved" notification.
    console.log(code === 0 ? `✔ Functions in ${shown}/ are ready: codegen and typecheck passed (${seconds}s); watching for changes.` : `Watching ${shown}/ for changes.`);
  }
  await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}
