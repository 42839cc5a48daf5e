import { describe, expect, it, vi } from "vitest";
import { ASSET_MANIFEST_PATH } from "@/lib/assets";
import { getBlobStore } from "@/lib/blob";
import { BlobStoreUnavailableError } from "@/lib/blob/errors";
import { assetForm, blobBytes, NOTHING_STORED, setupAssetFixture } from "./fixture";
import { sample } from "./samples";

const fx = setupAssetFixture();

async function projectWithAssets(...names: string[]) {
  const { project, sandbox } = await fx.newProject();
  const urls: Record<string, string> = {};
  for (const name of names) urls[name] = (await (await fx.upload(assetForm(project.id, name, sample("png")))).json()).blobUrl;
  return { project, sandbox, urls };
}

describe("DELETE /api/assets/delete", () => {
  it("deletes the blob, the sandbox file and the manifest entry, leaving other assets alone", async () => {
    const { project, sandbox, urls } = await projectWithAssets("gone.png", "kept.png");
    const response = await fx.remove({ projectId: project.id, filename: "gone.png" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true });

    expect(await blobBytes(urls["gone.png"])).toBeNull();
    expect(await blobBytes(urls["kept.png"])).not.toBeNull();
    const leftovers = await fx.leftovers(project, sandbox);
    expect(leftovers.files).toEqual(["kept.png"]);
    expect(Object.keys(leftovers.manifest!.assets)).toEqual(["kept.png"]);
    expect(leftovers.staging).toEqual([]);
  });

  it("answers 404 to a second call and touches nothing", async () => {
    const { project, sandbox } = await projectWithAssets("gone.png", "kept.png");
    expect((await fx.remove({ projectId: project.id, filename: "gone.png" })).status).toBe(200);
    const before = await fx.leftovers(project, sandbox);
    const del = vi.spyOn(getBlobStore(), "del");
    const run = vi.spyOn(sandbox.commands, "run");

    const again = await fx.remove({ projectId: project.id, filename: "gone.png" });
    expect(again.status).toBe(404);
    expect((await again.json()).error.code).toBe("asset_not_found");
    expect(del).not.toHaveBeenCalled();
    expect(run).not.toHaveBeenCalled();
    expect(await fx.leftovers(project, sandbox)).toEqual(before);
  });

  it("answers 404 for a name the manifest does not have, and for a project without manifest", async () => {
    const { project } = await projectWithAssets("a.png");
    expect((await fx.remove({ projectId: project.id, filename: "b.png" })).status).toBe(404);
    const empty = await fx.newProject();
    expect((await fx.remove({ projectId: empty.project.id, filename: "a.png" })).status).toBe(404);
    expect(await fx.leftovers(empty.project, empty.sandbox)).toEqual(NOTHING_STORED);
  });

  it("answers 404 for someone else's project and keeps its asset", async () => {
    const { project, sandbox } = await projectWithAssets("a.png");
    const before = await fx.leftovers(project, sandbox);
    const response = await fx.remove({ projectId: project.id, filename: "a.png" }, fx.stranger.headers);
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe("project_not_found");
    expect(await fx.leftovers(project, sandbox)).toEqual(before);
  });

  it("refuses names an upload cannot have produced, even when the manifest lists them", async () => {
    const { project, sandbox } = await projectWithAssets("a.png");
    const manifest = JSON.parse(await sandbox.files.read(ASSET_MANIFEST_PATH));
    manifest.assets["../../package.json"] = { ...manifest.assets["a.png"], localPath: "/home/user/app/package.json" };
    await sandbox.files.write(ASSET_MANIFEST_PATH, JSON.stringify(manifest));
    await sandbox.files.write("/home/user/app/package.json", "{}");

    const response = await fx.remove({ projectId: project.id, filename: "../../package.json" });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe("invalid_filename");
    expect(await sandbox.files.exists("/home/user/app/package.json")).toBe(true);
  });

  it("deletes this project's blob even when the manifest's blobUrl names another one", async () => {
    const victim = await projectWithAssets("v.png");
    const { project, sandbox, urls } = await projectWithAssets("a.png");
    const manifest = JSON.parse(await sandbox.files.read(ASSET_MANIFEST_PATH));
    manifest.assets["a.png"].blobUrl = victim.urls["v.png"];
    await sandbox.files.write(ASSET_MANIFEST_PATH, JSON.stringify(manifest));

    expect((await fx.remove({ projectId: project.id, filename: "a.png" })).status).toBe(200);
    expect(await blobBytes(urls["a.png"])).toBeNull();
    expect(await blobBytes(victim.urls["v.png"])).not.toBeNull();
  });

  it("keeps the entry when the blob cannot be deleted, so a retry finishes the job", async () => {
    const { project, sandbox, urls } = await projectWithAssets("a.png");
    vi.spyOn(getBlobStore(), "del").mockRejectedValueOnce(new BlobStoreUnavailableError("The blob store is down."));
    expect((await fx.remove({ projectId: project.id, filename: "a.png" })).status).toBe(502);
    expect(Object.keys((await fx.manifest(sandbox))!.assets)).toEqual(["a.png"]);

    expect((await fx.remove({ projectId: project.id, filename: "a.png" })).status).toBe(200);
    expect(await blobBytes(urls["a.png"])).toBeNull();
    expect(await fx.leftovers(project, sandbox)).toMatchObject({ blobs: [], files: [], manifest: { assets: {} }, staging: [] });
  });

  it("answers 400 to a body without filename", async () => {
    const { project } = await fx.newProject();
    const response = await fx.remove({ projectId: project.id });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe("invalid_request");
  });
});
