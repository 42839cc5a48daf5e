import crypto from "node:crypto";
import { Readable } from "node:stream";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobAlreadyExistsError, BlobOptionsError, BlobPathnameError } from "@/lib/blob/errors";
import type { BlobStore } from "@/lib/blob/port";

/** What a driver's test file hands the contract suite. */
export interface BlobContractHarness {
  store: BlobStore;
  /** Fetches a public URL the store returned (fs: through the route handler). */
  fetchPublic(url: string): Promise<Response>;
  cleanup(): Promise<void>;
}

export interface BlobContractOptions {
  /** Driver-specific tests registered inside the same describe block. */
  additionalTests?: (harness: () => BlobContractHarness) => void;
}

const MB = 1024 * 1024;

// A full GC on demand, so memory samples count live bytes rather than garbage not yet collected.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

async function liveBufferBytes(): Promise<number> {
  gc();
  // ArrayBuffer backing stores are released by a concurrent sweeper after the GC.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return process.memoryUsage().arrayBuffers;
}

/**
 * A `totalBytes` stream of fresh 64 KiB chunks, read on demand; samples live buffer memory at
 * every MiB and reports the peak growth over the baseline taken before the first chunk.
 */
function measuredStream(totalBytes: number): { stream: Readable; peakGrowth: () => number; sha256: () => string } {
  const hash = crypto.createHash("sha256");
  let baseline = 0;
  let peak = 0;
  async function* chunks() {
    baseline = await liveBufferBytes();
    const chunkBytes = 64 * 1024;
    for (let sent = 0; sent < totalBytes; sent += chunkBytes) {
      if (sent % MB === 0) peak = Math.max(peak, (await liveBufferBytes()) - baseline);
      const chunk = crypto.randomBytes(Math.min(chunkBytes, totalBytes - sent));
      hash.update(chunk);
      yield chunk;
    }
  }
  // highWaterMark 1: the stream itself reads ahead one chunk, not sixteen.
  return { stream: Readable.from(chunks(), { highWaterMark: 1 }), peakGrowth: () => peak, sha256: () => hash.digest("hex") };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(stream).arrayBuffer());
}

async function sha256Of(stream: ReadableStream<Uint8Array>): Promise<string> {
  const hash = crypto.createHash("sha256");
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
  return hash.digest("hex");
}

/** Runs `fn` over `items`, at most `concurrency` at a time. */
async function inBatches<T>(items: T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += concurrency) {
    await Promise.all(items.slice(start, start + concurrency).map(fn));
  }
}

/** Every page of a listing, following cursors. */
async function listAll(store: BlobStore, prefix: string, limit: number) {
  const pages: { pathnames: string[]; hasMore: boolean; cursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ prefix, limit, cursor });
    pages.push({ pathnames: page.blobs.map((blob) => blob.pathname), hasMore: page.hasMore, cursor: page.cursor });
    cursor = page.cursor;
  } while (cursor);
  return pages;
}

/**
 * The blob store contract (issue 4): every driver must pass it. Each test works under its own
 * random prefix, so tests never see each other's blobs.
 */
export function describeBlobContract(
  name: string,
  setup: () => Promise<BlobContractHarness>,
  options: BlobContractOptions = {},
): void {
  describe(`blob store contract: ${name}`, () => {
    let harness: BlobContractHarness;
    let store: BlobStore;
    const scope = () => `c-${crypto.randomBytes(4).toString("hex")}`;

    beforeAll(async () => {
      harness = await setup();
      store = harness.store;
    });
    afterAll(async () => {
      await harness?.cleanup();
    });

    it("puts a blob and reads it back through head, get, list and its public URL", async () => {
      const pathname = `${scope()}/docs/hello.txt`;
      const put = await store.put(pathname, "hello world", { access: "public" });
      expect(put).toMatchObject({ pathname, contentType: "text/plain", contentDisposition: 'inline; filename="hello.txt"' });
      expect(put.url.endsWith("/docs/hello.txt")).toBe(true);
      expect(put.downloadUrl).toBe(`${put.url}?download=1`);
      expect(put.etag).not.toBe("");

      const head = await store.head(put.url);
      expect(head).toMatchObject({ url: put.url, pathname, size: 11, contentType: "text/plain", etag: put.etag });
      expect(head!.cacheControl).toContain("max-age=2592000");
      expect(head!.uploadedAt).toBeInstanceOf(Date);
      expect(Math.abs(head!.uploadedAt.getTime() - Date.now())).toBeLessThan(10 * 60_000);
      expect(await store.head(pathname)).toEqual(head);

      const got = await store.get(pathname);
      expect(got!.blob.etag).toBe(put.etag);
      expect((await readAll(got!.stream)).toString()).toBe("hello world");

      const response = await harness.fetchPublic(put.url);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await response.text()).toBe("hello world");

      const listed = await store.list({ prefix: pathname.split("/")[0] });
      expect(listed.blobs).toHaveLength(1);
      expect(listed.blobs[0]).toMatchObject({ url: put.url, downloadUrl: put.downloadUrl, pathname, size: 11, etag: put.etag });
      expect(listed.blobs[0].uploadedAt).toBeInstanceOf(Date);
      expect(listed).toMatchObject({ hasMore: false, cursor: undefined });
    });

    it("answers null for missing blobs and deletes missing blobs without error", async () => {
      const pathname = `${scope()}/missing.txt`;
      expect(await store.head(pathname)).toBeNull();
      expect(await store.get(pathname)).toBeNull();
      await expect(store.del(pathname)).resolves.toBeUndefined();
      await expect(store.del([])).resolves.toBeUndefined();
    });

    it("deletes by URL and by pathname, one or many at a time", async () => {
      const root = scope();
      const puts = await Promise.all(["a.txt", "b.txt", "c.txt", "d.txt"].map((file) => store.put(`${root}/${file}`, file, { access: "public" })));
      await store.del(puts[0].url);
      expect(await store.head(puts[0].pathname)).toBeNull();
      await store.del([puts[1].url, puts[2].pathname, `${root}/never-existed.txt`]);
      expect((await store.list({ prefix: `${root}/` })).blobs.map((blob) => blob.pathname)).toEqual([`${root}/d.txt`]);
    });

    it("adds a random suffix before the extension only when asked", async () => {
      const root = scope();
      const first = await store.put(`${root}/photo.png`, "1", { access: "public", addRandomSuffix: true });
      const second = await store.put(`${root}/photo.png`, "2", { access: "public", addRandomSuffix: true });
      expect(first.pathname).toMatch(new RegExp(`^${root}/photo-[A-Za-z0-9]{30}\\.png$`));
      expect(second.pathname).not.toBe(first.pathname);
      expect(first.contentType).toBe("image/png");
      expect(first.contentDisposition).toBe('inline; filename="photo.png"');
      expect((await store.put(`${root}/plain.png`, "3", { access: "public", addRandomSuffix: false })).pathname).toBe(`${root}/plain.png`);
    });

    it("refuses to overwrite without allowOverwrite and replaces with it", async () => {
      const pathname = `${scope()}/screenshot.png`;
      const original = await store.put(pathname, "original", { access: "public" });
      await expect(store.put(pathname, "intruder", { access: "public" })).rejects.toBeInstanceOf(BlobAlreadyExistsError);
      expect((await readAll((await store.get(pathname))!.stream)).toString()).toBe("original");

      const replaced = await store.put(pathname, "replaced!", { access: "public", allowOverwrite: true });
      expect(replaced.pathname).toBe(pathname);
      expect(replaced.etag).not.toBe(original.etag);
      const head = await store.head(pathname);
      expect(head).toMatchObject({ size: 9, etag: replaced.etag });
      expect((await readAll((await store.get(pathname))!.stream)).toString()).toBe("replaced!");
    });

    it("detects content types from the extension, lets an explicit type win, and picks the disposition", async () => {
      const root = scope();
      const cases: [string, string, string][] = [
        ["ios/index.js", "application/javascript", "attachment"],
        ["ios/manifest.json", "application/json", "inline"],
        ["assets/logo.SVG", "image/svg+xml", "inline"],
        ["assets/font.woff2", "font/woff2", "attachment"],
        ["assets/clip.mp4", "video/mp4", "inline"],
        ["assets/no-extension", "application/octet-stream", "attachment"],
      ];
      for (const [file, type, disposition] of cases) {
        const put = await store.put(`${root}/${file}`, "x", { access: "public" });
        expect([file, put.contentType, put.contentDisposition.split(";")[0]]).toEqual([file, type, disposition]);
        expect((await store.head(put.pathname))!.contentType).toBe(type);
      }
      const explicit = await store.put(`${root}/data.bin`, "x", { access: "public", contentType: "image/webp" });
      expect(explicit.contentType).toBe("image/webp");
      expect((await store.head(explicit.url))!.contentType).toBe("image/webp");
    });

    it("honours cacheControlMaxAge and rejects invalid options", async () => {
      const root = scope();
      await store.put(`${root}/short.png`, "x", { access: "public", cacheControlMaxAge: 60 });
      expect((await store.head(`${root}/short.png`))!.cacheControl).toContain("max-age=60");
      const bad = [
        () => store.put(`${root}/a.txt`, "x", { access: "public", cacheControlMaxAge: 59 }),
        () => store.put(`${root}/a.txt`, "x", { access: "private" as "public" }),
        () => store.put(`${root}/a.txt`, "x", { access: "public", contentType: "text/plain\r\nx-evil: 1" }),
        () => store.put(`${root}/a.txt`, { not: "a body" } as unknown as string, { access: "public" }),
        () => store.list({ limit: 0 }),
        () => store.list({ limit: 1001 }),
      ];
      for (const call of bad) await expect(call()).rejects.toBeInstanceOf(BlobOptionsError);
      expect(await store.head(`${root}/a.txt`)).toBeNull();
    });

    it("accepts every body kind and stores the exact bytes", async () => {
      const root = scope();
      const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
      const bodies = {
        "string.txt": "héllo ✓",
        "buffer.bin": bytes,
        "uint8array.bin": new Uint8Array(bytes),
        "arraybuffer.bin": bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
        "blob.bin": new Blob([bytes]),
        "web-stream.bin": new Blob([bytes]).stream(),
        "node-stream.png": Readable.from([bytes.subarray(0, 3), bytes.subarray(3)]),
      };
      for (const [file, body] of Object.entries(bodies)) {
        const put = await store.put(`${root}/${file}`, body, { access: "public" });
        const expected = file === "string.txt" ? Buffer.from("héllo ✓") : bytes;
        expect([file, await readAll((await store.get(put.url))!.stream)]).toEqual([file, expected]);
      }
      // The type comes from the name even when the body is a stream of unknown type.
      expect((await store.head(`${root}/node-stream.png`))!.contentType).toBe("image/png");
    });

    it("rejects invalid pathnames with a typed error in put, head, get and del", async () => {
      const invalid = ["", "/leading", "a//b", "trailing/", "a/../b", "..", "./a", "a\\b", "nul\u0000byte", "x".repeat(951)];
      for (const pathname of invalid) {
        for (const call of [
          () => store.put(pathname, "x", { access: "public" }),
          () => store.head(pathname),
          () => store.get(pathname),
          () => store.del([pathname]),
        ]) {
          await expect(call(), JSON.stringify(pathname.slice(0, 20))).rejects.toBeInstanceOf(BlobPathnameError);
        }
      }
    });

    it("round-trips pathnames with spaces, reserved URL characters and non-ASCII", async () => {
      const pathname = `${scope()}/ünï cödé/#1 what?&=+%20.txt`;
      const put = await store.put(pathname, "odd", { access: "public" });
      expect(put.pathname).toBe(pathname);
      expect((await store.head(put.url))!.pathname).toBe(pathname);
      expect((await store.list({ prefix: pathname })).blobs.map((blob) => blob.pathname)).toEqual([pathname]);
      expect(await (await harness.fetchPublic(put.url)).text()).toBe("odd");
      await store.del(put.url);
      expect(await store.head(pathname)).toBeNull();
    });

    it("isolates prefixes byte-wise: bundles/p1/ does not list bundles/p10/", async () => {
      const root = scope();
      for (const file of ["bundles/p1/c1/ios/index.js", "bundles/p1/c2/assetmap.json", "bundles/p10/c1/ios/index.js", "bundles/p1"]) {
        await store.put(`${root}/${file}`, "x", { access: "public" });
      }
      const listed = await store.list({ prefix: `${root}/bundles/p1/` });
      expect(listed.blobs.map((blob) => blob.pathname)).toEqual([`${root}/bundles/p1/c1/ios/index.js`, `${root}/bundles/p1/c2/assetmap.json`]);
    });

    it("pages through 2,500 blobs in pathname order with cursors, then deletes them in one call", async () => {
      const root = scope();
      const pathnames = Array.from({ length: 2500 }, (_, i) => `${root}/many/${String(i).padStart(5, "0")}.txt`);
      // allowOverwrite spares the S3 driver its existence check: these pathnames are fresh anyway.
      await inBatches([...pathnames].reverse(), 50, (pathname) => store.put(pathname, "x", { access: "public", allowOverwrite: true }));
      await store.put(`${root}/other/outside.txt`, "x", { access: "public" });

      const pages = await listAll(store, `${root}/many/`, 1000);
      expect(pages.map((page) => page.pathnames.length)).toEqual([1000, 1000, 500]);
      expect(pages.map((page) => page.hasMore)).toEqual([true, true, false]);
      expect(pages[2].cursor).toBeUndefined();
      expect(pages.flatMap((page) => page.pathnames)).toEqual(pathnames);

      const smallPages = await listAll(store, `${root}/many/`, 700);
      expect(smallPages.map((page) => page.pathnames.length)).toEqual([700, 700, 700, 400]);
      expect(smallPages.flatMap((page) => page.pathnames)).toEqual(pathnames);

      await store.del(pathnames);
      expect((await store.list({ prefix: `${root}/` })).blobs.map((blob) => blob.pathname)).toEqual([`${root}/other/outside.txt`]);
    });

    it("streams a 25 MB put with memory growth far below its size", async () => {
      const pathname = `${scope()}/big/bundle.bin`;
      const size = 25 * MB;
      const body = measuredStream(size);
      await store.put(pathname, body.stream, { access: "public" });
      // Bounded by the driver's part buffer, not by the blob: fs holds one chunk, the Vercel
      // driver one 5 MiB part, lib-storage (S3) two.
      expect(body.peakGrowth()).toBeLessThan(12 * MB);
      expect((await store.head(pathname))!.size).toBe(size);
      expect(await sha256Of((await store.get(pathname))!.stream)).toBe(body.sha256());
      await store.del(pathname);
    });

    options.additionalTests?.(() => harness);
  });
}
