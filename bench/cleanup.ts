/**
 * Bundle cleanup on the fs blob driver: 100k blobs over 1k projects (20 commits × 5 files each,
 * one commit per day), cleaned with the defaults (keep 5, 30 days), as `npm run cleanup -- --all`
 * does. Seeds real files in the driver's layout and the metadata rows in bulk SQL.
 * Run: npx tsx bench/cleanup.ts [projects=1000] [commitsPerProject=20]
 * Always a throwaway DATA_DIR with PGlite: never the configured database.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const PROJECTS = Number(process.argv[2] ?? 1000);
const COMMITS = Number(process.argv[3] ?? 20);
const FILES = ["ios/index.js", "ios/manifest.json", "assetmap.json", "assets/icon", "assets/font"];
const DAY_MS = 86_400_000;
const INSERT_BATCH = 5_000;
const WRITE_PARALLELISM = 64;

process.env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "bench-cleanup-"));
process.env.LOG_LEVEL = "silent";
delete process.env.DATABASE_URL;
const { createFsBlobStore } = await import("@/lib/blob/drivers/fs");
const { cleanupBundles } = await import("@/lib/bundles/cleanup");
const { bundlePrefix } = await import("@/lib/bundles/paths");
const { getConfig } = await import("@/lib/config");
const { closeStore, getStore } = await import("@/lib/store");

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(2);
const rootDir = path.join(getConfig().DATA_DIR, "blobs");
const now = new Date();

interface Row {
  pathname: string;
  etag: string;
  size: number;
  uploadedAt: Date;
}

function plannedRows(projectIds: string[]): Row[] {
  const rows: Row[] = [];
  for (const projectId of projectIds) {
    for (let commit = 0; commit < COMMITS; commit++) {
      const commitId = crypto.createHash("sha1").update(`${projectId}/${commit}`).digest("hex");
      const uploadedAt = new Date(now.getTime() - commit * DAY_MS - 60_000);
      for (const file of FILES) {
        rows.push({ pathname: bundlePrefix(projectId, commitId) + file, etag: crypto.randomBytes(16).toString("hex"), size: 64, uploadedAt });
      }
    }
  }
  return rows;
}

/**
 * Files in the fs driver's layout (`objects/<first 2 hex>/<version>`, see fs-files.ts) written
 * without the driver's per-file fsync, which would make seeding take minutes; then the rows.
 */
async function seed(rows: Row[]): Promise<void> {
  const body = Buffer.alloc(64, 7);
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITE_PARALLELISM }, async () => {
      while (next < rows.length) {
        const { etag } = rows[next++];
        await fs.promises.mkdir(path.join(rootDir, "objects", etag.slice(0, 2)), { recursive: true });
        await fs.promises.writeFile(path.join(rootDir, "objects", etag.slice(0, 2), etag), body);
      }
    }),
  );
  const db = await getStore();
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    const batch = rows.slice(start, start + INSERT_BATCH);
    await db.query(
      `insert into blobs (pathname, size, content_type, content_disposition, cache_control, etag, uploaded_at)
       select p, s, 'application/octet-stream', 'attachment', 'public, max-age=2592000', '"' || e || '"', u
       from unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[]) as t(p, s, e, u)`,
      [batch.map((row) => row.pathname), batch.map((row) => row.size), batch.map((row) => row.etag), batch.map((row) => row.uploadedAt)],
    );
  }
}

const countFiles = (dir: string): number =>
  fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length : 0;

try {
  const projectIds = Array.from({ length: PROJECTS }, () => crypto.randomUUID());
  const rows = plannedRows(projectIds);
  await getStore(); // opening PGlite and migrating is not part of either figure
  let started = performance.now();
  await seed(rows);
  console.log(`seeded ${rows.length} blobs (${PROJECTS} projects × ${COMMITS} commits × ${FILES.length} files) in ${seconds(started)} s`);

  const blob = createFsBlobStore({ rootDir, publicBaseUrl: "http://localhost:3000", getSql: getStore });
  // The seeded layout must be the driver's: one blob read back proves it.
  const probe = await blob.get(rows[0].pathname);
  if (!probe || (await new Response(probe.stream).arrayBuffer()).byteLength !== rows[0].size) throw new Error("seeded files are not where the fs driver reads them");
  started = performance.now();
  const dry = await cleanupBundles(blob, projectIds, { dryRun: true, now });
  console.log(`dry run: ${seconds(started)} s (lists every project, deletes nothing)`);

  started = performance.now();
  const summary = await cleanupBundles(blob, projectIds, { now });
  const elapsed = (performance.now() - started) / 1000;
  console.log(`cleanup: ${elapsed.toFixed(2)} s for ${summary.projects} projects, ${(elapsed * 1000 / summary.projects).toFixed(1)} ms/project`);
  console.log(
    `  kept ${summary.commitsKept} commits, deleted ${summary.commitsDeleted} commits / ${summary.blobsDeleted} blobs ` +
      `(${Math.round(summary.blobsDeleted / elapsed)} blobs/s), ${summary.bytesDeleted} bytes`,
  );
  const { rows: left } = await (await getStore()).query<{ count: string }>("select count(*) from blobs");
  console.log(`  rows left ${left[0].count}, files left ${countFiles(path.join(rootDir, "objects"))}, dry run matched: ${JSON.stringify(dry) === JSON.stringify(summary)}`);
} finally {
  await closeStore();
  fs.rmSync(process.env.DATA_DIR, { recursive: true, force: true });
}
