import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBlobStore, prepareBlobFile } from "@/lib/blob";
import { createFsBlobStore } from "@/lib/blob/drivers/fs";
import { BlobAlreadyExistsError, BlobOptionsError } from "@/lib/blob/errors";
import { getConfig } from "@/lib/config";
import { getStore, openStore, type Sql } from "@/lib/store";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { describeBlobContract } from "../contract/blob";
import { fetchThroughRoute } from "./route-client";

/** Every file under a directory, relative to it. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

const blobRoot = () => path.join(getConfig().DATA_DIR, "blobs");

describeBlobContract(
  "fs (PGlite metadata, served by the Next.js route)",
  async () => ({ store: getBlobStore(), fetchPublic: (url) => fetchThroughRoute(url), cleanup: async () => {} }),
  {
    additionalTests: (harness) => {
      it("serves URLs under PUBLIC_BASE_URL/blob/", async () => {
        const put = await harness().store.put("fs-only/url.txt", "x", { access: "public", allowOverwrite: true });
        expect(put.url).toBe(`${getConfig().PUBLIC_BASE_URL}/blob/fs-only/url.txt`);
      });

      it("leaves no blob and no file behind when the body fails mid-stream", async () => {
        const store = harness().store;
        async function* failing() {
          yield Buffer.alloc(256 * 1024, 1);
          throw new Error("client went away");
        }
        const before = filesUnder(blobRoot());
        await expect(store.put("fs-only/broken.bin", Readable.from(failing()), { access: "public" })).rejects.toThrow("client went away");
        expect(await store.head("fs-only/broken.bin")).toBeNull();
        expect(filesUnder(blobRoot())).toEqual(before);
      });

      it("keeps exactly one file per blob across overwrites and removes it on delete", async () => {
        const store = harness().store;
        const before = filesUnder(blobRoot()).length;
        await store.put("fs-only/versions.txt", "v1", { access: "public" });
        await store.put("fs-only/versions.txt", "v2", { access: "public", allowOverwrite: true });
        await store.put("fs-only/versions.txt", "v3", { access: "public", allowOverwrite: true });
        expect(filesUnder(blobRoot()).length).toBe(before + 1);
        await store.del("fs-only/versions.txt");
        expect(filesUnder(blobRoot()).length).toBe(before);
      });

      it("putFile moves a host file into the store: same bytes, one file per blob, gone from its path", async () => {
        const store = harness().store;
        if (!store.putFile || !store.prepareFile) throw new Error("expected the fs driver");
        const hostPath = path.join(getConfig().DATA_DIR, `put-file-${crypto.randomUUID()}`);
        const bytes = Buffer.alloc(300 * 1024, 7);
        fs.writeFileSync(hostPath, bytes);
        const before = filesUnder(blobRoot()).length;
        const put = await store.putFile("fs-only/moved.bin", hostPath, { access: "public", allowOverwrite: true });
        expect(fs.existsSync(hostPath)).toBe(false);
        expect(filesUnder(blobRoot()).length).toBe(before + 1);
        const found = await store.get(put.pathname);
        expect(found!.blob.size).toBe(bytes.length);
        expect(Buffer.from(await new Response(found!.stream).arrayBuffer()).equals(bytes)).toBe(true);
        await store.del(put.pathname);
      });

      it("prepareBlobFile makes a host file's bytes a version nobody sees until its put; the host file stays", async () => {
        const store = harness().store;
        const hostPath = path.join(getConfig().DATA_DIR, `put-file-${crypto.randomUUID()}`);
        fs.writeFileSync(hostPath, "prepared");
        const before = filesUnder(blobRoot()).length;
        const prepared = await prepareBlobFile(store, hostPath);
        expect(filesUnder(blobRoot()).length).toBe(before + 1);
        expect(fs.readFileSync(hostPath, "utf8")).toBe("prepared");
        expect(await store.head("fs-only/prepared.txt")).toBeNull();
        const put = await prepared.put("fs-only/prepared.txt", { access: "public", allowOverwrite: true });
        fs.rmSync(hostPath);
        expect(await new Response((await store.get(put.pathname))!.stream).text()).toBe("prepared");
        // Discarding after the put leaves the committed blob alone.
        await prepared.discard();
        expect(await new Response((await store.get(put.pathname))!.stream).text()).toBe("prepared");
        expect(filesUnder(blobRoot()).length).toBe(before + 1);
        await store.del(put.pathname);
        expect(filesUnder(blobRoot()).length).toBe(before);
      });

      it("a prepared file that is discarded, or whose put is refused, leaves no file in the store", async () => {
        const store = harness().store;
        await store.put("fs-only/taken-prepared.txt", "first", { access: "public", allowOverwrite: true });
        const hostPath = path.join(getConfig().DATA_DIR, `put-file-${crypto.randomUUID()}`);
        fs.writeFileSync(hostPath, "second");
        const before = filesUnder(blobRoot());
        await (await prepareBlobFile(store, hostPath)).discard();
        expect(filesUnder(blobRoot())).toEqual(before);
        const refused = await prepareBlobFile(store, hostPath);
        await expect(refused.put("fs-only/taken-prepared.txt", { access: "public" })).rejects.toBeInstanceOf(BlobAlreadyExistsError);
        expect(filesUnder(blobRoot())).toEqual(before);
        expect(await new Response((await store.get("fs-only/taken-prepared.txt"))!.stream).text()).toBe("first");
        await expect(prepareBlobFile(store, path.join(getConfig().DATA_DIR, "missing-host-file"))).rejects.toMatchObject({ code: "ENOENT" });
        expect(filesUnder(blobRoot())).toEqual(before);
        fs.rmSync(hostPath);
        await store.del("fs-only/taken-prepared.txt");
      });

      it("putFile removes the host file and stores nothing when the put is refused", async () => {
        const store = harness().store;
        if (!store.putFile || !store.prepareFile) throw new Error("expected the fs driver");
        await store.put("fs-only/taken.txt", "first", { access: "public", allowOverwrite: true });
        const hostPath = path.join(getConfig().DATA_DIR, `put-file-${crypto.randomUUID()}`);
        fs.writeFileSync(hostPath, "second");
        const before = filesUnder(blobRoot());
        await expect(store.putFile("fs-only/taken.txt", hostPath, { access: "public" })).rejects.toBeInstanceOf(BlobAlreadyExistsError);
        expect(fs.existsSync(hostPath)).toBe(false);
        expect(filesUnder(blobRoot())).toEqual(before);
        expect(await new Response((await store.get("fs-only/taken.txt"))!.stream).text()).toBe("first");
      });

      it("closes a blob's file when its stream ends, is cancelled, or is dropped unread and collected", async () => {
        const store = harness().store;
        const put = await store.put("fs-only/descriptors.bin", Buffer.alloc(200 * 1024, 3), { access: "public", allowOverwrite: true });
        const objects = path.join(blobRoot(), "objects");
        // This process's descriptors open on blob files (Linux /proc).
        const openBlobFiles = () =>
          fs.readdirSync("/proc/self/fd").filter((fd) => {
            try {
              return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(objects);
            } catch {
              return false;
            }
          }).length;
        const before = openBlobFiles();

        const read = await store.get(put.pathname);
        expect(openBlobFiles()).toBe(before + 1);
        expect((await new Response(read!.stream).arrayBuffer()).byteLength).toBe(200 * 1024);
        expect(openBlobFiles()).toBe(before);

        await (await store.get(put.pathname))!.stream.cancel();
        expect(openBlobFiles()).toBe(before);

        // Dropped: nothing holds the stream once this returns.
        const dropUnread = async () => void (await store.get(put.pathname));
        await dropUnread();
        expect(openBlobFiles()).toBe(before + 1);
        v8.setFlagsFromString("--expose-gc");
        const gc = vm.runInNewContext("gc") as () => void;
        // Finalizers run after a collection, in a later task.
        for (let attempt = 0; attempt < 100 && openBlobFiles() > before; attempt++) {
          gc();
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(openBlobFiles()).toBe(before);
        await store.del(put.pathname);
      });

      it("rejects a cursor it did not issue", async () => {
        await expect(harness().store.list({ cursor: "not a cursor!" })).rejects.toBeInstanceOf(BlobOptionsError);
      });

      it("is the driver getBlobStore() picks by default", () => {
        expect(harness().store).toMatchObject({ driver: "fs", open: expect.any(Function), putFile: expect.any(Function), prepareFile: expect.any(Function) });
      });
    },
  },
);

describe("fs blob driver when the metadata commit fails", () => {
  it("removes the version file putFile moved in, and the host file", async () => {
    const rootDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-fs-blobs-"));
    // The database answers lookups but fails the commit, as when it goes away mid-put.
    const failingCommit = async (): Promise<Sql> => {
      const sql = await getStore();
      return new Proxy(sql, {
        get: (target, key) =>
          key === "transaction" ? () => Promise.reject(new Error("database went away")) : Reflect.get(target, key, target),
      });
    };
    const store = createFsBlobStore({ rootDir, publicBaseUrl: "http://blobs.test", getSql: failingCommit });
    const hostPath = path.join(rootDir, "upload.part");
    fs.writeFileSync(hostPath, Buffer.alloc(64 * 1024, 3));
    try {
      await expect(store.putFile("commit/fails.bin", hostPath, { access: "public", allowOverwrite: true })).rejects.toThrow("database went away");
      expect(filesUnder(rootDir)).toEqual([]);
      expect(await store.head("commit/fails.bin")).toBeNull();
    } finally {
      fs.rmSync(rootDir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres("fs blob driver on PostgreSQL: concurrent writers", () => {
  let sql: Sql;
  let drop: () => Promise<void>;
  const rootDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-fs-blobs-"));
  const store = createFsBlobStore({ rootDir, publicBaseUrl: "http://blobs.test", getSql: async () => sql });

  beforeAll(async () => {
    const database = await createThrowawayDatabase();
    drop = database.drop;
    sql = await openStore({ databaseUrl: database.url, dataDir: rootDir });
  });
  afterAll(async () => {
    await sql?.close();
    await drop?.();
    fs.rmSync(rootDir, { recursive: true, force: true });
  });

  it("lets exactly one of several concurrent first puts win and cleans up the losers' files", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.put("race/first.txt", `writer ${i}`, { access: "public" })),
    );
    const winners = results.filter((result) => result.status === "fulfilled");
    expect(winners).toHaveLength(1);
    for (const result of results) {
      if (result.status === "rejected") expect(result.reason).toBeInstanceOf(BlobAlreadyExistsError);
    }
    expect(filesUnder(path.join(rootDir, "objects"))).toHaveLength(1);
  });

  it("leaves exactly the winning version's file after concurrent overwrites", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.put("race/overwritten.txt", `writer ${i}`, { access: "public", allowOverwrite: true }),
      ),
    );
    const head = await store.head("race/overwritten.txt");
    const files = filesUnder(path.join(rootDir, "objects"));
    expect(files).toHaveLength(2);
    expect(files.map((file) => path.basename(file))).toContain(head!.etag.slice(1, -1));
    const text = await new Response((await store.get("race/overwritten.txt"))!.stream).text();
    expect(text).toMatch(/^writer \d$/);
    expect(head!.size).toBe(text.length);
  });
});
