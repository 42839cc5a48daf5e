import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as listRoute } from "@/app/api/assets/route";
import { POST as restartRoute } from "@/app/api/projects/[id]/sandbox/restart/route";
import { ASSET_FILES_DIR, ASSETS_DIR, assetBlobPrefix, type AssetUploadResult } from "@/lib/assets";
import { createProject } from "@/lib/projects";
import { APP_TEMPLATE, getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { listProjectAssets } from "@/lib/store/assets";
import { getProject, updateProjectSandbox, type Project } from "@/lib/store/projects";
import { assetForm, blobBytes, blobPathnames, setupAssetFixture } from "./fixture";
import { sample } from "./samples";
import { afterSandboxStart } from "@/lib/workspace";

// Real local sandboxes seeded from the app template (a git repository; a restart keeps every file,
// a sandbox can still lose its asset files), driven through the upload, restart and delete routes.
const fx = setupAssetFixture();
const UPLOADS = [
  { filename: "logo.png", bytes: sample("png", 4_000) },
  { filename: "splash.gif", bytes: sample("gif", 2_500) },
  { filename: "chime.mp3", bytes: sample("mp3", 3_000) },
];
const NAMES = UPLOADS.map((upload) => upload.filename).sort();

let project: Project;
const sandboxIds: string[] = [];
const answers = new Map<string, AssetUploadResult>();

beforeAll(async () => {
  project = await createProject(fx.db, fx.owner.user.id, "assets-restart");
  sandboxIds.push(project.sandboxId!);
});
afterAll(async () => {
  for (const sandboxId of sandboxIds) await getSandboxProvider().kill(sandboxId);
});

const sandboxOf = async () => getSandboxProvider().connect((await getProject(fx.db, project.id))!.sandboxId!);
const fileNames = async (sandbox: Sandbox) =>
  (await sandbox.files.exists(ASSET_FILES_DIR)) ? (await sandbox.files.list(ASSET_FILES_DIR)).map((entry) => entry.name).sort() : [];

/** Every asset is in the sandbox byte for byte, listed under the URL its upload answered, with its blob and record. */
async function expectAllAssets(sandbox: Sandbox) {
  expect(await fileNames(sandbox)).toEqual(NAMES);
  const manifest = (await fx.manifest(sandbox))!;
  expect(Object.keys(manifest.assets).sort()).toEqual(NAMES);
  for (const upload of UPLOADS) {
    const entry = manifest.assets[upload.filename];
    expect(Buffer.from(await sandbox.files.read(entry.localPath, { format: "bytes" }))).toEqual(Buffer.from(upload.bytes));
    expect(entry.blobUrl).toBe(answers.get(upload.filename)!.blobUrl);
    expect(entry.size).toBe(upload.bytes.length);
    expect(Buffer.from((await blobBytes(entry.blobUrl))!)).toEqual(Buffer.from(upload.bytes));
  }
  expect((await listProjectAssets(fx.db, project.id)).map((record) => record.filename)).toEqual(NAMES);
}

describe("assets across sandbox restarts", () => {
  it("uploads three assets", async () => {
    for (const upload of UPLOADS) {
      const response = await fx.upload(assetForm(project.id, upload.filename, upload.bytes));
      expect(response.status).toBe(200);
      answers.set(upload.filename, await response.json());
    }
    await expectAllAssets(await sandboxOf());
  });

  it("are kept by a restart, and restored by the restart route when the sandbox lost them", async () => {
    const sandbox = await sandboxOf();
    await sandbox.restart();
    await expectAllAssets(sandbox);
    // A sandbox that lost them (files removed behind the service's back): the files and manifest are gone.
    await sandbox.files.remove(ASSETS_DIR);
    expect(await fileNames(sandbox)).toEqual([]);
    expect(await fx.manifest(sandbox)).toBeNull();

    const response = await restartRoute(
      new Request(`http://localhost/api/projects/${project.id}/sandbox/restart`, { method: "POST", headers: fx.owner.headers }),
      { params: Promise.resolve({ id: project.id }) },
    );
    expect(response.status).toBe(200);
    await expectAllAssets(sandbox);
  });

  it("are restored into a brand-new sandbox of the same project", async () => {
    const fresh = await getSandboxProvider().create({ template: APP_TEMPLATE });
    sandboxIds.push(fresh.sandboxId);
    expect(await fileNames(fresh)).toEqual([]);
    await updateProjectSandbox(fx.db, project.id, { sandboxId: fresh.sandboxId, previewUrl: null });
    await afterSandboxStart(fresh, (await getProject(fx.db, project.id))!);
    await expectAllAssets(fresh);
  });

  it("are in the sandbox the asset routes create for a project that lost its sandbox", async () => {
    await updateProjectSandbox(fx.db, project.id, { sandboxId: null, previewUrl: null });
    const response = await listRoute(new Request(`http://localhost/api/assets?projectId=${project.id}`, { headers: fx.owner.headers }), {
      params: Promise.resolve({}),
    } as never);
    expect(response.status).toBe(200);
    const { sandboxId } = (await getProject(fx.db, project.id))!;
    sandboxIds.push(sandboxId!);
    expect((await response.json()).assets.map((asset: { filename: string }) => asset.filename).sort()).toEqual(NAMES);
    await expectAllAssets(await sandboxOf());
  });

  it("are all deleted through the API, leaving no file, manifest entry, blob or record", async () => {
    const sandbox = await sandboxOf();
    await sandbox.files.remove(ASSETS_DIR);
    for (const { filename } of UPLOADS) {
      const response = await fx.remove({ projectId: project.id, filename });
      expect(response.status).toBe(200);
    }
    expect(await fileNames(sandbox)).toEqual([]);
    expect((await fx.manifest(sandbox))?.assets ?? {}).toEqual({});
    expect(await blobPathnames(assetBlobPrefix(project.ownerId, project.id))).toEqual([]);
    expect(await listProjectAssets(fx.db, project.id)).toEqual([]);
  });
});
