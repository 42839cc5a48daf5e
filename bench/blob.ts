/**
 * Blob store benchmark (fs driver, PGlite metadata). Run: npx tsx bench/blob.ts
 * Prints put throughput for 1 MB and 10 MB files, GET req/s for 4 KB files through the
 * Next.js route handler called as a function (no HTTP: bench/blob-serve.ts measures GET over
 * HTTP, with its client in another process), and list latency for 10k blobs under one prefix.
 * Uses a throwaway DATA_DIR.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-bench-blob-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";

const { getBlobStore } = await import("@/lib/blob");
const { GET } = await import("@/app/blob/[...pathname]/route");
const { closeStore, getStore } = await import("@/lib/store");

const store = getBlobStore();
const MB = 1_000_000;

/** Runs `count` operations with at most `concurrency` in flight; returns elapsed ms. */
async function timed(count: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await op(next++);
    }),
  );
  return performance.now() - start;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * p)];
const fmt = (value: number, digits = 1) => value.toFixed(digits);

async function benchPut(sizeBytes: number, count: number, concurrency: number, kind: "buffer" | "stream") {
  const payload = crypto.randomBytes(sizeBytes);
  const body = () => (kind === "buffer" ? payload : Readable.from(chunked(payload)));
  const ms = await timed(count, concurrency, (i) =>
    store.put(`bench/put-${sizeBytes}-${kind}-${concurrency}/${i}.bin`, body(), { access: "public" }),
  );
  console.log(
    `put ${sizeBytes / MB} MB (${kind}, ${concurrency} concurrent, ${count} files): ${fmt((sizeBytes * count) / MB / (ms / 1000))} MB/s, ${fmt(ms / count, 2)} ms/put`,
  );
}

/** 64 KiB slices, like a network upload. */
function* chunked(payload: Buffer) {
  for (let offset = 0; offset < payload.length; offset += 65_536) yield payload.subarray(offset, offset + 65_536);
}

const routeContext = (url: string) => ({
  params: Promise.resolve({ pathname: new URL(url).pathname.replace(/^\/blob\//, "").split("/").map(decodeURIComponent) }),
});

async function benchGet(files: number, requests: number, concurrency: number) {
  const urls: string[] = [];
  for (let i = 0; i < files; i++) {
    urls.push((await store.put(`bench/get/${i}.txt`, crypto.randomBytes(4096), { access: "public" })).url);
  }

  const direct = await timed(requests, concurrency, async (i) => {
    const response = await GET(new Request(urls[i % files]), routeContext(urls[i % files]));
    await response.arrayBuffer();
  });
  console.log(`GET 4 KB via route handler (in-process, ${concurrency} concurrent): ${fmt(requests / (direct / 1000), 0)} req/s`);
}

async function benchList(count: number) {
  const putMs = await timed(count, 32, (i) => store.put(`bench/list/${String(i).padStart(6, "0")}.json`, "{}", { access: "public" }));
  console.log(`(setup: ${count} puts of 2-byte blobs at ${fmt(count / (putMs / 1000), 0)} puts/s)`);
  // Neighbours on both sides of the prefix: metadata rows only, since list never reads files.
  const db = await getStore();
  await db.query(
    `insert into blobs (pathname, size, content_type, content_disposition, cache_control, etag)
     select 'bench/lis' || g || '.json', 2, 'application/json', 'inline', 'public, max-age=60', '"x"' from generate_series(1, $1) g
     union all
     select 'bench/listing/' || g || '.json', 2, 'application/json', 'inline', 'public, max-age=60', '"x"' from generate_series(1, $1) g`,
    [count],
  );

  const firstPage: number[] = [];
  for (let run = 0; run < 20; run++) {
    const start = performance.now();
    await store.list({ prefix: "bench/list/", limit: 1000 });
    firstPage.push(performance.now() - start);
  }
  const fullWalk: number[] = [];
  for (let run = 0; run < 5; run++) {
    const start = performance.now();
    let cursor: string | undefined;
    let seen = 0;
    do {
      const page = await store.list({ prefix: "bench/list/", cursor });
      seen += page.blobs.length;
      cursor = page.cursor;
    } while (cursor);
    if (seen !== count) throw new Error(`listed ${seen} of ${count}`);
    fullWalk.push(performance.now() - start);
  }
  console.log(
    `list ${count} blobs under one prefix (+${2 * count} neighbours): page of 1000 p50 ${fmt(percentile(firstPage, 0.5))} ms, p90 ${fmt(percentile(firstPage, 0.9))} ms; all ${count / 1000} pages p50 ${fmt(percentile(fullWalk, 0.5))} ms`,
  );
}

try {
  console.log(`blob bench: fs driver, PGlite, node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`);
  // Opens PGlite and applies migrations outside the timings.
  await store.put("bench/warm-up.txt", "x", { access: "public" });
  await benchPut(1 * MB, 50, 1, "buffer");
  await benchPut(1 * MB, 50, 4, "buffer");
  await benchPut(1 * MB, 50, 4, "stream");
  await benchPut(10 * MB, 10, 1, "buffer");
  await benchPut(10 * MB, 10, 4, "stream");
  await benchGet(200, 5000, 32);
  await benchList(10_000);
} finally {
  await closeStore();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
