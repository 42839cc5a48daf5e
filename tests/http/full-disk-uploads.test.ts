import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { POST as uploadImageRoute } from "@/app/api/upload-image/route";
import { getConfig } from "@/lib/config";
import { assetForm, blobPathnames, NOTHING_STORED, setupAssetFixture } from "../assets/fixture";
import { sample } from "../assets/samples";

// Issue 36 part 3: every upload route on a full file system answers 507 insufficient_storage and
// leaves nothing partial: no blob, no spool file, no record, no sandbox file. Where the disk is
// full, the spool directory or the blob store, is a 2 MiB tmpfs (mounting needs root, as in CI).

const fx = setupAssetFixture();
const mounted: string[] = [];

/** Mounts a 2 MiB tmpfs over `dir` (under this file's DATA_DIR) until the test ends. */
function fillUp(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]);
  mounted.push(dir);
}
afterEach(() => {
  for (const dir of mounted.splice(0)) execFileSync("umount", [dir]);
});

const uploadImage = (body: FormData) =>
  uploadImageRoute(new Request("http://localhost:3000/api/upload-image", { method: "POST", headers: fx.owner.headers, body }), { params: Promise.resolve({}) } as never);
const chatImages = () => blobPathnames(`chat-images/${fx.owner.user.id}/`);
/** 4 MB: under the 10 MB upload limit, over the 2 MiB file system. */
const big = () => sample("png", 4 * 1024 * 1024);

async function expectInsufficientStorage(response: Response): Promise<void> {
  expect(response.status).toBe(507);
  expect(await response.json()).toEqual({ error: { code: "insufficient_storage", message: expect.any(String) } });
}

describe.each([
  { where: "the spool directory", dir: () => path.join(getConfig().DATA_DIR, "uploads") },
  { where: "the blob store", dir: () => path.join(getConfig().DATA_DIR, "blobs") },
])("uploads when $where is full", ({ dir }) => {
  it("POST /api/upload-image answers 507 and stores nothing; a small image still fits", async () => {
    const before = await chatImages();
    fillUp(dir());
    await expectInsufficientStorage(await uploadImage(assetForm(undefined, "big.png", big(), "image/png")));
    expect(await chatImages()).toEqual(before);
    expect(fs.readdirSync(path.join(getConfig().DATA_DIR, "uploads"))).toEqual([]);

    const small = await uploadImage(assetForm(undefined, "small.png", sample("png", 64 * 1024), "image/png"));
    expect(small.status).toBe(200);
    expect((await chatImages()).sort()).toEqual([...before, (await small.json()).pathname].sort());
  });

  it("POST /api/assets/upload answers 507 and leaves no blob, record, sandbox file or spool file", async () => {
    const { project, sandbox } = await fx.newProject();
    fillUp(dir());
    await expectInsufficientStorage(await fx.upload(assetForm(project.id, "hero.png", big(), "image/png")));
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });
});
