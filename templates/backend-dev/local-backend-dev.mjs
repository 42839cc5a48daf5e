// Offline stand-in for the backend CLI's `dev` command (BACKEND_PROVIDER=local): the local
// emulator has no function runtime, so this only watches backend/ and reports, in the CLI's own
// words, which files it would push. It checks what it can without a compiler: backend.json is
// valid JSON and every module under backend/ is readable, non-empty UTF-8.
import fs from "node:fs";
import path from "node:path";

const appDir = process.cwd();
const backendDir = path.join(appDir, "backend");
const url = process.env.BACKEND_DEPLOYMENT_URL ?? "(no deployment URL)";
const time = () => new Date().toTimeString().slice(0, 8);

function modules(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "_generated" ? [] : modules(full);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

function check() {
  const started = Date.now();
  console.log("- Preparing backend functions...");
  const problems = [];
  try {
    JSON.parse(fs.readFileSync(path.join(appDir, "backend.json"), "utf8"));
  } catch (error) {
    problems.push(`backend.json: ${error.message}`);
  }
  const files = modules(backendDir);
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    if (text.includes("\uFFFD")) problems.push(`${path.relative(appDir, file)} is not valid UTF-8`);
    if (text.trim() === "") problems.push(`${path.relative(appDir, file)} is empty`);
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(`✖ Error: ${problem}`);
    return;
  }
  console.log(`✔ ${time()} Backend functions ready! (${files.length} modules, ${Date.now() - started}ms) → ${url}`);
}

check();
let pending;
fs.watch(appDir, { recursive: true }, (_event, name) => {
  if (!name || !(name.startsWith("backend") || name === "backend.json")) return;
  clearTimeout(pending);
  pending = setTimeout(check, 100);
});
