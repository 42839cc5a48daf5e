/**
 * Repository mirror benchmark. Run: npx tsx bench/repository-mirror.ts [commits=200]
 * In a local sandbox, makes an app repository with N commits (50 files, one changed per commit)
 * and an uncommitted edit, then times, in alternating rounds: the mirror (working-tree snapshot,
 * `git bundle create --all`, sealing, blob put, store record), the rebuild of a new sandbox's
 * repository from it, and the reference, a plain `git bundle create --all` of the same repository.
 * Uses a throwaway DATA_DIR (fs blob store, embedded store).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-bench-mirror-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";

const { getSandboxProvider, APP_DIR } = await import("@/lib/sandbox");
const { closeStore, getStore } = await import("@/lib/store");
const { insertProject } = await import("@/lib/store/projects");
const { mirrorProjectRepository, restoreProjectRepository } = await import("@/lib/repository-mirror");
const { createTestUser } = await import("../tests/helpers/users");

const COMMITS = Number(process.argv[2] ?? 200);
const ROUNDS = 5;
const provider = getSandboxProvider();
const db = await getStore();
const owner = await createTestUser(db, "Bench");
const project = await insertProject(db, { ownerId: owner.user.id, name: "bench" });
const source = await provider.create();
const target = await provider.create();

for (const sandbox of [source, target]) await sandbox.files.makeDir(APP_DIR);
const run = (sandbox: typeof source, command: string) => sandbox.commands.run(command, { cwd: APP_DIR, timeoutMs: 600_000 });
await run(
  source,
  [
    "git init -q -b main && git config user.name Bench && git config user.email bench@example.invalid",
    "for f in $(seq 1 50); do head -c 2000 /dev/urandom | base64 > file-$f.txt; done && git add -A && git commit -q -m start",
    `for i in $(seq 1 ${COMMITS}); do echo "change $i" >> file-$(( i % 50 + 1 )).txt; git commit -q -am "commit $i"; done`,
    "echo uncommitted >> file-1.txt",
  ].join(" && "),
);
await run(target, "git init -q -b main && git config user.name Bench && git config user.email bench@example.invalid && git commit -q --allow-empty -m seed");

const timings = { reference: [] as number[], mirror: [] as number[], rebuild: [] as number[] };
const time = async (label: keyof typeof timings, work: () => Promise<unknown>) => {
  const start = performance.now();
  await work();
  timings[label].push(performance.now() - start);
};
let size = 0;
for (let round = 0; round < ROUNDS; round++) {
  await time("reference", () => run(source, `git bundle create -q /home/user/reference.bundle --all && rm /home/user/reference.bundle`));
  // A new working-tree state each round, so the mirror is stored (not "unchanged").
  await run(source, `echo ${crypto.randomBytes(4).toString("hex")} >> file-2.txt`);
  await time("mirror", async () => {
    const outcome = await mirrorProjectRepository(source, project.id);
    if (outcome.status !== "mirrored") throw new Error(`mirror ${outcome.status}`);
    size = outcome.sizeBytes;
  });
  await time("rebuild", async () => {
    const outcome = await restoreProjectRepository(target, project.id);
    if (outcome.status !== "restored") throw new Error(`rebuild ${JSON.stringify(outcome)}`);
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`repository: ${COMMITS + 1} commits, 50 files, an uncommitted edit; mirror ${(size / 1024).toFixed(0)} KiB sealed; ${ROUNDS} rounds, median (min–max) ms:`);
for (const [label, values] of Object.entries(timings)) {
  console.log(`  ${label.padEnd(9)} ${median(values).toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`);
}
console.log(`load average: ${os.loadavg().map((value) => value.toFixed(1)).join(" ")}`);

await provider.kill(source.sandboxId);
await provider.kill(target.sandboxId);
await closeStore();
fs.rmSync(dataDir, { recursive: true, force: true });
