import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFsBlobStore } from "@/lib/blob/drivers/fs";
import { errorResponse } from "@/lib/http";
import { getStore } from "@/lib/store";

// Issue 36 part 3: a full disk is a 507, and leaves nothing partial. The blob store's files are on a
// 1 MiB tmpfs (mounting needs root, as in CI).

const MiB = 1024 * 1024;
let mountPoint: string;

/** Every file under `dir`. */
const filesUnder = (dir: string) => (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((entry) => entry.isFile());

beforeAll(() => {
  mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-full-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint]);
});
afterAll(() => {
  if (!mountPoint) return;
  execFileSync("umount", [mountPoint]);
  fs.rmSync(mountPoint, { recursive: true, force: true });
});

describe("uploads to a full file system", () => {
  it("answer 507 insufficient_storage and leave no file and no blob behind; smaller ones still fit", async () => {
    const store = createFsBlobStore({ rootDir: mountPoint, publicBaseUrl: "http://blobs.test", getSql: getStore });
    const failure = await store.put("assets/too-big.bin", Buffer.alloc(4 * MiB, 7), { access: "public" }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).not.toBeNull();
    const response = errorResponse(failure);
    expect(response.status).toBe(507);
    expect((await response.json()).error.code).toBe("insufficient_storage");
    expect(await store.head("assets/too-big.bin")).toBeNull();
    expect(filesUnder(mountPoint)).toEqual([]);

    const small = await store.put("assets/small.bin", Buffer.alloc(64 * 1024, 1), { access: "public" });
    expect(await store.head(small.pathname)).not.toBeNull();
  });
});
