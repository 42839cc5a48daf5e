import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ASSET_MANIFEST_PATH } from "@/lib/assets";
import { type FsBlobStore, getBlobStore } from "@/lib/blob";
import { BlobStoreUnavailableError } from "@/lib/blob/errors";
import { getConfig } from "@/lib/config";
import { CommandExitError } from "@/lib/sandbox";
import { assetForm, NOTHING_STORED, setupAssetFixture } from "./fixture";
import { multipartBody, streamingRequest } from "./multipart";
import { pngChunks, sample } from "./samples";

const fx = setupAssetFixture();

const commandFailure = () => new CommandExitError({ exitCode: 1, stdout: "", stderr: "mv: cannot move: Input/output error" });

/** The default fs store, whose `prepareFile` takes the spool file's bytes over. */
function fsBlobs(): FsBlobStore {
  const store = getBlobStore();
  if (store.driver !== "fs") throw new Error("the asset tests run on the fs blob driver");
  return store as FsBlobStore;
}

/** Every file of the fs blob store (committed versions and temp files), relative to its root. */
function blobFiles(): string[] {
  const root = path.join(getConfig().DATA_DIR, "blobs");
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** Makes the next asset's blob commit fail, as when the blob store went down after its file was prepared. */
function failNextBlobPut(): void {
  const store = fsBlobs();
  const prepareFile = store.prepareFile.bind(store);
  vi.spyOn(store, "prepareFile").mockImplementationOnce(async (hostPath) => ({
    ...(await prepareFile(hostPath)),
    put: () => Promise.reject(new BlobStoreUnavailableError("The blob store is down.")),
  }));
}

describe("an asset upload either fully happens or leaves nothing", () => {
  it("deletes the blob when the sandbox commit fails after the blob put", async () => {
    const { project, sandbox } = await fx.newProject();
    const before = blobFiles();
    const prepareFile = vi.spyOn(fsBlobs(), "prepareFile");
    // The local sandbox commits through its filesystem: the manifest's rename fails.
    const rename = sandbox.files.rename!.bind(sandbox.files);
    vi.spyOn(sandbox.files, "rename").mockImplementation((from: string, to: string) =>
      to === ASSET_MANIFEST_PATH ? Promise.reject(commandFailure()) : rename(from, to),
    );

    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")));
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe("sandbox_command_failed");
    expect(prepareFile).toHaveBeenCalledTimes(1);
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
    expect(blobFiles()).toEqual(before);
  });

  it("removes the staged sandbox file when the blob put fails after it", async () => {
    const { project, sandbox } = await fx.newProject();
    const before = blobFiles();
    const copy = vi.spyOn(sandbox.files, "copyFromHost");
    failNextBlobPut();

    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")));
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe("blob_store_failed");
    expect(copy).toHaveBeenCalled();
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
    expect(blobFiles()).toEqual(before);
  });

  it("leaves nothing in the blob store when the sandbox write fails", async () => {
    const { project, sandbox } = await fx.newProject();
    const before = blobFiles();
    vi.spyOn(sandbox.files, "copyFromHost").mockRejectedValueOnce(commandFailure());

    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")));
    expect(response.status).toBe(502);
    // The blob's file was prepared beside the copy: it is removed, never committed.
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
    expect(blobFiles()).toEqual(before);
  });

  it("leaves no blob, sandbox file, manifest entry or spool file when the body breaks off mid-file", async () => {
    const { project, sandbox } = await fx.newProject();
    const before = blobFiles();
    const copy = vi.spyOn(sandbox.files, "copyFromHost");
    const png = pngChunks(4 * 1024 * 1024);
    function* breaksOff(): Generator<Uint8Array> {
      let sent = 0;
      for (const chunk of png) {
        yield chunk;
        sent += chunk.byteLength;
        if (sent > 1024 * 1024) throw new Error("the client went away");
      }
    }
    const body = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: "a.png", body: breaksOff() }]);

    const response = await fx.uploadRequest(streamingRequest(fx.uploadUrl, body, fx.owner.headers));
    expect(response.status).toBe(400);
    expect(copy).not.toHaveBeenCalled();
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
    expect(blobFiles()).toEqual(before);
  });

  it("links the spool file into the blob store without starting a sandbox command: one new blob file, no spool file left", async () => {
    const { project, sandbox } = await fx.newProject();
    const before = blobFiles().length;
    const run = vi.spyOn(sandbox.commands, "run");
    const response = await fx.upload(assetForm(project.id, "moved.png", sample("png")));
    expect(response.status).toBe(200);
    expect(run).not.toHaveBeenCalled();
    expect(blobFiles()).toHaveLength(before + 1);
    expect((await fx.leftovers(project, sandbox)).spool).toEqual([]);
  });

  it("keeps earlier assets intact when a later upload fails", async () => {
    const { project, sandbox } = await fx.newProject();
    expect((await fx.upload(assetForm(project.id, "kept.png", sample("png")))).status).toBe(200);
    const before = await fx.leftovers(project, sandbox);
    failNextBlobPut();
    expect((await fx.upload(assetForm(project.id, "lost.png", sample("png")))).status).toBe(502);
    expect(await fx.leftovers(project, sandbox)).toEqual(before);
  });
});
