import crypto from "node:crypto";
import path from "node:path";
import { PassThrough } from "node:stream";
import { beforeEach, describe, expect, it } from "vitest";
import { listAllBlobs, type BlobStore } from "@/lib/blob";
import { createFsBlobStore } from "@/lib/blob/drivers/fs";
import { cleanupBundles } from "@/lib/bundles/cleanup";
import { parseCleanupArgs, runCleanupCommand } from "@/lib/bundles/cleanup-cli";
import { bundlePrefix } from "@/lib/bundles/paths";
import { getConfig } from "@/lib/config";
import { getStore } from "@/lib/store";
import { insertProject } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

const NOW = new Date("2026-11-23T12:00:00Z");
const DAY = 86_400_000;

const allPathnames = async (blob: BlobStore, prefix: string) => (await listAllBlobs(blob, prefix)).map((entry) => entry.pathname);

/** Uploads a three-file commit and dates it `daysAgo` before NOW (metadata lives in the store). */
async function putCommit(blob: BlobStore, projectId: string, commit: string, daysAgo: number) {
  const prefix = bundlePrefix(projectId, commit);
  for (const file of ["ios/index.js", "ios/manifest.json", "assetmap.json"]) {
    await blob.put(prefix + file, `${commit}:${file}`, { access: "public", allowOverwrite: true });
  }
  const db = await getStore();
  await db.query("update blobs set uploaded_at = $2 where pathname like $1", [
    prefix + "%",
    new Date(NOW.getTime() - daysAgo * DAY),
  ]);
}

const commitsOf = async (blob: BlobStore, projectId: string) =>
  [...new Set((await allPathnames(blob, bundlePrefix(projectId))).map((p) => p.split("/")[2]))].sort();

describe("bundle cleanup", () => {
  let blob: BlobStore;
  let projectId: string;

  beforeEach(async () => {
    blob = createFsBlobStore({
      rootDir: path.join(getConfig().DATA_DIR, `blobs-${crypto.randomUUID()}`),
      publicBaseUrl: "http://localhost:3000",
      getSql: getStore,
    });
    const db = await getStore();
    await db.query("delete from blobs");
    projectId = crypto.randomUUID();
  });

  it("keeps the newest N commits by uploadedAt", async () => {
    for (let i = 0; i < 8; i++) await putCommit(blob, projectId, `c${i}`, i);
    const summary = await cleanupBundles(blob, [projectId], { keep: 5, now: NOW });
    expect(await commitsOf(blob, projectId)).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect(summary).toMatchObject({ projects: 1, commitsKept: 5, commitsDeleted: 3, blobsDeleted: 9 });
    expect(summary.bytesDeleted).toBe(["c5", "c6", "c7"].reduce((n, c) => n + `${c}:ios/index.js${c}:ios/manifest.json${c}:assetmap.json`.length, 0));
  });

  it("deletes commits older than the age limit", async () => {
    await putCommit(blob, projectId, "fresh", 1);
    await putCommit(blob, projectId, "old", 40);
    await putCommit(blob, projectId, "older", 50);
    await cleanupBundles(blob, [projectId], { keep: 5, maxAgeDays: 30, now: NOW });
    expect(await commitsOf(blob, projectId)).toEqual(["fresh"]);
  });

  it("never deletes the newest commit, however old", async () => {
    await putCommit(blob, projectId, "a", 40);
    await putCommit(blob, projectId, "b", 45);
    await cleanupBundles(blob, [projectId], { keep: 0, maxAgeDays: 30, now: NOW });
    expect(await commitsOf(blob, projectId)).toEqual(["a"]);
  });

  it("orders a commit by its newest blob", async () => {
    await putCommit(blob, projectId, "x", 10);
    await putCommit(blob, projectId, "y", 5);
    // A late upload into commit x makes it the newest.
    await blob.put(bundlePrefix(projectId, "x") + "assets/late.png", "late", { access: "public" });
    await cleanupBundles(blob, [projectId], { keep: 1, now: NOW });
    expect(await commitsOf(blob, projectId)).toEqual(["x"]);
  });

  it("touches only the given project, not one whose id shares a prefix", async () => {
    const other = `${projectId}0`;
    for (let i = 0; i < 3; i++) {
      await putCommit(blob, projectId, `c${i}`, i);
      await putCommit(blob, other, `c${i}`, i);
    }
    await cleanupBundles(blob, [projectId], { keep: 1, now: NOW });
    expect(await commitsOf(blob, projectId)).toEqual(["c0"]);
    expect(await commitsOf(blob, other)).toEqual(["c0", "c1", "c2"]);
  });

  it("walks every list page (more than one page of blobs)", async () => {
    // 12 commits × 3 blobs with a page size below one project's blob count.
    for (let i = 0; i < 12; i++) await putCommit(blob, projectId, `c${String(i).padStart(2, "0")}`, i);
    const paged: BlobStore = { ...blob, list: (options) => blob.list({ ...options, limit: 7 }) };
    await cleanupBundles(paged, [projectId], { keep: 2, now: NOW });
    expect(await commitsOf(blob, projectId)).toEqual(["c00", "c01"]);
  });

  it("dry run reports the same totals and deletes nothing", async () => {
    for (let i = 0; i < 7; i++) await putCommit(blob, projectId, `c${i}`, i);
    const before = await allPathnames(blob, bundlePrefix(projectId));
    const dry = await cleanupBundles(blob, [projectId], { keep: 5, now: NOW, dryRun: true });
    expect(await allPathnames(blob, bundlePrefix(projectId))).toEqual(before);
    const real = await cleanupBundles(blob, [projectId], { keep: 5, now: NOW });
    expect(real).toEqual(dry);
  });

  it("--all walks every project in the store and prints a summary", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const p1 = await insertProject(db, { ownerId: user.id, name: "one" });
    const p2 = await insertProject(db, { ownerId: user.id, name: "two" });
    for (let i = 0; i < 3; i++) {
      await putCommit(blob, p1.id, `c${i}`, i);
      await putCommit(blob, p2.id, `c${i}`, i);
    }
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk) => (printed += chunk));
    const command = parseCleanupArgs(["--all", "--keep", "1"]);
    const summary = await runCleanupCommand(command, { blob, db, output });
    expect(await commitsOf(blob, p1.id)).toEqual(["c0"]);
    expect(await commitsOf(blob, p2.id)).toEqual(["c0"]);
    expect(summary.commitsDeleted).toBe(4);
    expect(printed).toMatch(/deleted 4 commit\(s\), 12 blob\(s\)/);
  });

  it("parses the command line strictly", () => {
    expect(parseCleanupArgs(["--project", "a", "--project", "b", "--dry-run"])).toEqual({
      projectIds: ["a", "b"],
      keep: 5,
      maxAgeDays: 30,
      dryRun: true,
    });
    expect(() => parseCleanupArgs([])).toThrow(/either --project/);
    expect(() => parseCleanupArgs(["--all", "--project", "a"])).toThrow(/either --project/);
    expect(() => parseCleanupArgs(["--all", "--keep", "-1"])).toThrow(/--keep/);
    expect(() => parseCleanupArgs(["--all", "--bogus"])).toThrow();
  });
});
