/**
 * `npx convex export` and `npx convex import` of an emulated deployment (issue 38), with the real
 * CLI on embedded PGlite: a JSONL import of N documents into one deployment, the export of its
 * snapshot ZIP, and the import of that ZIP into a second deployment. Each line is the CLI's wall
 * time (its own start, about 2 s on this machine, included).
 * Run: npx tsx bench/convex-snapshots.ts [documents, default 10000]
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

// A throwaway data directory, set before the config is first read.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-snapshots-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";

const [{ provisionManagedProject }, { startEmulatorServer }, { closeStore }] = await Promise.all([import("@/lib/backend"), import("@/lib/emulator/server"), import("@/lib/store")]);

const documents = Number(process.argv[2] ?? 10_000);
const server = await startEmulatorServer();
const { identity } = server.emulator;
const provision = (projectName: string) =>
  provisionManagedProject({ teamScopedToken: identity.teamToken, teamSlug: identity.teamSlug, projectName }, { provisionHost: server.baseUrl });
const source = await provision("bench export source");
const target = await provision("bench import target");
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "bench-snapshots-app-"));

/** Runs the CLI against a deployment (named in its environment); its wall time in ms. */
async function timedCli(deployment: { deploymentUrl: string; token: string }, args: string[]): Promise<number> {
  const started = performance.now();
  await promisify(execFile)(path.resolve("node_modules/.bin/convex"), args, {
    cwd,
    env: { ...process.env, CONVEX_SELF_HOSTED_URL: deployment.deploymentUrl, CONVEX_SELF_HOSTED_ADMIN_KEY: deployment.token, CI: "1" },
    timeout: 600_000,
  });
  return performance.now() - started;
}

try {
  // The CLI wants a project that depends on convex.
  fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "bench-snapshots", private: true, dependencies: { convex: "1.48.0" } }));
  fs.symlinkSync(path.resolve("node_modules"), path.join(cwd, "node_modules"), "dir");
  const rows = Array.from({ length: documents }, (_, index) => JSON.stringify({ key: index, label: `item ${index}`, tags: ["a", "b"], score: index / 7 }));
  fs.writeFileSync(path.join(cwd, "items.jsonl"), `${rows.join("\n")}\n`);
  const zipPath = path.join(cwd, "snapshot.zip");

  const jsonl = await timedCli(source, ["import", "--table", "items", "items.jsonl", "-y"]);
  const exported = await timedCli(source, ["export", "--path", zipPath]);
  const imported = await timedCli(target, ["import", zipPath, "-y"]);
  console.log(`documents: ${documents.toLocaleString("en-US")} (ZIP ${(fs.statSync(zipPath).size / 1024).toFixed(0)} KiB)`);
  console.log(`convex import --table items (JSONL): ${(jsonl / 1000).toFixed(2)} s`);
  console.log(`convex export:                       ${(exported / 1000).toFixed(2)} s`);
  console.log(`convex import (ZIP, second deployment): ${(imported / 1000).toFixed(2)} s`);
} finally {
  await server.close();
  await closeStore();
  fs.rmSync(cwd, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
