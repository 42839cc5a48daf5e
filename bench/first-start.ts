/**
 * First start from a fresh clone (issue 34): clone → `npm ci` → `npm start` (production build and
 * app toolchain install side by side) → a new project's page in Chromium showing "Open preview",
 * with the preview serving its first web bundle. Each phase's time is printed.
 *
 * Two runs, each on a fresh clone, DATA_DIR and APP_TOOLCHAIN_DIR (nothing of the machine's caches
 * is used or touched): `cold` with empty npm caches (the clone's `npm ci` and the toolchain's
 * install), then `warm` with the caches the cold run filled. The user's clicks count as instant.
 * Run: npx tsx bench/first-start.ts [--repo <path or URL>] [--only cold|warm]
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";
import { CHROMIUM_ARGS } from "@/lib/screenshots/browser";
import { freePort } from "../tests/e2e/server";

const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const repo = argument("--repo") ?? process.cwd();
const only = argument("--only");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "bench-first-start-"));
const npmCache = path.join(work, "npm-cache");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Runs a command to its end; its output goes to `log`. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, log: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(log, "a");
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", out, out] });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited with ${code}; see ${log}`))));
  });
}

/** Resolves with the time a line matching `pattern` appeared in the server's output. */
function lineSeen(output: { text: string; listeners: (() => void)[] }, pattern: RegExp): Promise<number> {
  return new Promise((resolve) => {
    const check = () => {
      if (!pattern.test(output.text)) return false;
      resolve(performance.now());
      return true;
    };
    if (!check()) output.listeners.push(() => void check());
  });
}

async function untilOk(url: string, init?: RequestInit): Promise<Response> {
  for (;;) {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) }).catch(() => null);
    if (response?.ok) return response;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The entry bundle URL of an Expo web page, from its HTML. */
async function entryBundleUrl(previewUrl: string): Promise<URL> {
  const page = await (await untilOk(previewUrl)).text();
  const src = /<script src="([^"]+)"/.exec(page)?.[1];
  if (!src) throw new Error("the preview page names no script");
  return new URL(src.replaceAll("&amp;", "&"), previewUrl);
}

async function firstStart(name: "cold" | "warm", toolchainCache: string | null): Promise<string> {
  const dir = path.join(work, name);
  const clone = path.join(dir, "clone");
  const toolchainDir = path.join(dir, "toolchain");
  fs.mkdirSync(toolchainDir, { recursive: true });
  // The toolchain keeps its npm cache inside its directory: a warm run starts with the cold run's.
  if (toolchainCache) fs.renameSync(toolchainCache, path.join(toolchainDir, "npm-cache"));
  const log = path.join(dir, "output.log");
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_cache: npmCache,
    npm_config_update_notifier: "false",
    PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    DATA_DIR: path.join(dir, "data"),
    APP_TOOLCHAIN_DIR: toolchainDir,
  };
  const phases: [string, number][] = [];
  const mark = (what: string, since: number, at = performance.now()) => phases.push([what, at - since]);

  let started = performance.now();
  execFileSync("git", ["clone", "-q", repo, clone]);
  mark("git clone", started);
  started = performance.now();
  await run("npm", ["ci", "--no-audit", "--no-fund"], clone, env, log);
  mark("npm ci", started);

  const output = { text: "", listeners: [] as (() => void)[] };
  const begin = performance.now();
  const server: ChildProcess = spawn("npm", ["start"], { cwd: clone, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const collect = (chunk: Buffer) => {
    output.text += chunk.toString("utf8");
    fs.appendFileSync(log, chunk);
    for (const listener of output.listeners) listener();
  };
  server.stdout!.on("data", collect);
  server.stderr!.on("data", collect);
  const exited = new Promise<never>((_resolve, reject) => server.once("exit", (code) => reject(new Error(`npm start exited with ${code}; see ${log}`))));
  const builtAt = lineSeen(output, /Generating static pages.*\(\d+\/\d+\) in/);
  const toolchainAt = lineSeen(output, /App toolchain ready: \d+ packages/);
  const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
  try {
    await Promise.race([lineSeen(output, /signin\/link\?token=/), exited]);
    await Promise.race([untilOk(`${baseUrl}/api/health`), exited]);
    mark("npm start: production build", begin, await builtAt);
    mark("npm start: server answers (after the build)", begin);
    const token = /API token \(shown only now, keep it\):\s+(\S+)/.exec(output.text)![1];
    const signInLink = /(https?:\/\/\S+\/signin\/link\?token=\S+)/.exec(output.text)![1];

    // What the dashboard's "Create project" does; it waits for the toolchain, then starts Metro.
    const created = await fetch(`${baseUrl}/api/projects`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench app" }),
    });
    if (created.status !== 201 && created.status !== 200) throw new Error(`creating the project answered ${created.status}: ${await created.text()}`);
    const project = (await created.json()) as { id: string; previewUrl: string };
    mark("npm start: app toolchain ready (beside the build)", begin, await Promise.race([toolchainAt, Promise.resolve(performance.now())]));
    mark("npm start: project created, Metro running", begin);

    const page = await browser.newPage();
    await page.goto(signInLink.replace(/^https?:\/\/[^/]+/, baseUrl));
    await page.click("button[type=submit]");
    await page.waitForFunction(() => location.pathname === "/projects", { timeout: 120_000 });
    await page.goto(`${baseUrl}/projects/${project.id}`);
    const previewLink = await page
      .waitForFunction(() => [...document.querySelectorAll("a")].find((anchor) => anchor.textContent?.trim() === "Open preview")?.getAttribute("href"), { timeout: 60_000 })
      .catch(() => null);
    const previewUrl = (await previewLink?.jsonValue()) ?? null;
    if (!previewUrl) throw new Error(`the project page (${page.url()}) shows no "Open preview"`);
    if (previewUrl !== project.previewUrl) throw new Error(`the project page links ${previewUrl}, not ${project.previewUrl}`);
    await untilOk((await entryBundleUrl(previewUrl)).toString());
    mark("npm start: project page with a running preview (first web bundle served)", begin);
  } finally {
    console.log(`\n${name} (npm caches ${name === "cold" ? "empty" : "filled by the cold run"}; output in ${log}):`);
    for (const [what, ms] of phases) console.log(`  ${what.padEnd(72)} ${seconds(ms).padStart(8)}`);
    await browser.close();
    if (server.exitCode === null) {
      const stopped = new Promise((resolve) => server.once("exit", resolve));
      process.kill(server.pid!, "SIGINT");
      await stopped;
    }
  }
  return path.join(toolchainDir, "npm-cache");
}

console.log(`first start of ${repo} under ${work}; load average ${os.loadavg().map((load) => load.toFixed(1)).join(" ")}, ${os.cpus().length} cores`);
const coldCache = only === "warm" ? null : await firstStart("cold", null);
if (only !== "cold") await firstStart("warm", coldCache);
console.log(`load average at the end ${os.loadavg().map((load) => load.toFixed(1)).join(" ")}`);
