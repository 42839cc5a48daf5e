import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import {
  ASSET_FILES_DIR,
  ASSET_MANIFEST_PATH,
  assetBlobPathname,
  getAssetManifestLock,
  reconcileProjectAssets,
  restoreProjectAssets,
  type AssetMaintenance,
} from "@/lib/assets";
import { POST as reconcileRoute } from "@/app/api/projects/[id]/assets/reconcile/route";
import { parseReconcileArgs, runReconcileCommand } from "@/lib/assets/reconcile";
import { getBlobStore } from "@/lib/blob";
import { getSandboxProvider } from "@/lib/sandbox";
import { listProjectAssets } from "@/lib/store/assets";
import type { Project } from "@/lib/store/projects";
import { assetForm, blobBytes, blobPathnames, setupAssetFixture } from "./fixture";
import { sample } from "./samples";

const fx = setupAssetFixture();

const maintenance = (): AssetMaintenance => ({ db: fx.db, blobs: getBlobStore(), manifestLock: getAssetManifestLock(), sandboxes: getSandboxProvider() });
const pathnameOf = (project: Project, filename: string) => assetBlobPathname(project.ownerId, project.id, filename);
const putBlob = (project: Project, filename: string, bytes: Uint8Array) =>
  getBlobStore().put(pathnameOf(project, filename), Buffer.from(bytes), { access: "public", allowOverwrite: true });

/** A project with `kept.png` uploaded, `lost.png` uploaded and then its blob deleted behind its back, and an orphan blob. */
async function projectWithMismatches() {
  const { project, sandbox } = await fx.newProject();
  for (const name of ["kept.png", "lost.png"]) expect((await fx.upload(assetForm(project.id, name, sample("png")))).status).toBe(200);
  await getBlobStore().del(pathnameOf(project, "lost.png"));
  await putBlob(project, "stray.png", sample("png", 500));
  return { project, sandbox };
}

describe("reconcileProjectAssets", () => {
  it("reports an orphan blob and a manifest entry without blob, and changes nothing with dryRun", async () => {
    const { project, sandbox } = await projectWithMismatches();
    const before = await fx.leftovers(project, sandbox);

    const report = await reconcileProjectAssets(project, maintenance(), { dryRun: true });
    expect(report).toEqual({
      projectId: project.id,
      dryRun: true,
      sandbox: "read",
      orphanBlobs: [pathnameOf(project, "stray.png")],
      recorded: [],
      missingBlobs: ["lost.png"],
    });
    expect(await fx.leftovers(project, sandbox)).toEqual(before);
  });

  it("deletes the orphan blob, keeps every asset, and leaves the entry without blob in place (reported)", async () => {
    const { project, sandbox } = await projectWithMismatches();
    const report = await reconcileProjectAssets(project, maintenance(), { dryRun: false });
    expect(report.orphanBlobs).toEqual([pathnameOf(project, "stray.png")]);
    expect(report.missingBlobs).toEqual(["lost.png"]);

    expect(await blobPathnames(`${project.ownerId}/${project.id}/`)).toEqual([pathnameOf(project, "kept.png")]);
    const leftovers = await fx.leftovers(project, sandbox);
    expect(leftovers.files).toEqual(["kept.png", "lost.png"]);
    expect(Object.keys(leftovers.manifest!.assets).sort()).toEqual(["kept.png", "lost.png"]);
    // A second run finds no orphan any more.
    expect((await reconcileProjectAssets(project, maintenance(), { dryRun: false })).orphanBlobs).toEqual([]);
  });

  it("records an asset an earlier version listed in the manifest only, instead of deleting its blob", async () => {
    const { project, sandbox } = await fx.newProject();
    const put = await putBlob(project, "old.png", sample("png", 700));
    const entry = { blobUrl: put.url, localPath: `${ASSET_FILES_DIR}/old.png`, contentType: "image/png", size: 700 };
    await sandbox.files.write(ASSET_MANIFEST_PATH, JSON.stringify({ assets: { "old.png": entry } }));

    const report = await reconcileProjectAssets(project, maintenance(), { dryRun: false });
    expect(report).toMatchObject({ orphanBlobs: [], recorded: ["old.png"], missingBlobs: [] });
    expect(await listProjectAssets(fx.db, project.id)).toEqual([{ filename: "old.png", blobUrl: put.url, contentType: "image/png", size: 700 }]);
    expect(await blobBytes(put.url)).not.toBeNull();
  });

  it("judges by the record alone when the project's sandbox is gone", async () => {
    const { project, sandbox } = await projectWithMismatches();
    await getSandboxProvider().kill(sandbox.sandboxId);
    const report = await reconcileProjectAssets(project, maintenance(), { dryRun: false });
    expect(report).toMatchObject({ sandbox: "none", orphanBlobs: [pathnameOf(project, "stray.png")], missingBlobs: ["lost.png"] });
    expect(await blobPathnames(`${project.ownerId}/${project.id}/`)).toEqual([pathnameOf(project, "kept.png")]);
  });
});

describe("POST /api/projects/<id>/assets/reconcile", () => {
  const post = (project: Project, body: unknown, headers: Record<string, string>) =>
    reconcileRoute(
      new Request(`http://localhost/api/projects/${project.id}/assets/reconcile`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
      { params: Promise.resolve({ id: project.id }) },
    );

  it("answers the owner's report (what npm run assets:reconcile prints beside a server); a stranger gets 404", async () => {
    const { project, sandbox } = await projectWithMismatches();
    const before = await fx.leftovers(project, sandbox);
    expect((await post(project, { dryRun: true }, fx.stranger.headers)).status).toBe(404);
    expect((await post(project, { dryRun: "yes" }, fx.owner.headers)).status).toBe(400);
    expect(await fx.leftovers(project, sandbox)).toEqual(before);

    const response = await post(project, {}, fx.owner.headers);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ dryRun: false, orphanBlobs: [pathnameOf(project, "stray.png")], missingBlobs: ["lost.png"] });
    expect(await blobPathnames(`${project.ownerId}/${project.id}/`)).toEqual([pathnameOf(project, "kept.png")]);
  });
});

describe("npm run assets:reconcile", () => {
  it("parses --project (repeatable) or --all, with --dry-run, and refuses anything else", () => {
    expect(parseReconcileArgs(["--project", "a", "--project", "b"])).toEqual({ projectIds: ["a", "b"], dryRun: false });
    expect(parseReconcileArgs(["--all", "--dry-run"])).toEqual({ projectIds: "all", dryRun: true });
    expect(() => parseReconcileArgs([])).toThrow(/--project <id> or --all/);
    expect(() => parseReconcileArgs(["--all", "--project", "a"])).toThrow(/--project <id> or --all/);
    expect(() => parseReconcileArgs(["--all", "--force"])).toThrow();
  });

  it("prints each finding and a summary, and deletes the orphan blob without --dry-run", async () => {
    const { project } = await projectWithMismatches();
    const run = async (argv: string[]) => {
      let printed = "";
      const output = new Writable({
        write(chunk, _encoding, done) {
          printed += String(chunk);
          done();
        },
      });
      await runReconcileCommand(parseReconcileArgs(argv), { ...maintenance(), output });
      return printed;
    };
    const stray = pathnameOf(project, "stray.png");

    expect(await run(["--project", project.id, "--dry-run"])).toBe(
      [
        `${project.id}: orphan blob ${stray} (would delete)`,
        `${project.id}: asset lost.png has no blob (left as it is)`,
        "1 project(s): 1 orphan blob(s) to delete, 0 asset(s) to record, 1 asset(s) without blob",
        "",
      ].join("\n"),
    );
    expect(await blobBytes(stray)).not.toBeNull();
    expect(await run(["--project", project.id])).toContain(`${project.id}: orphan blob ${stray} deleted\n`);
    expect(await blobBytes(stray)).toBeNull();
  });

  it("refuses an unknown project", async () => {
    await expect(runReconcileCommand({ projectIds: [crypto.randomUUID()], dryRun: true }, { ...maintenance(), output: new Writable() })).rejects.toThrow(
      /No project/,
    );
  });
});

describe("restoreProjectAssets", () => {
  it("writes recorded assets back into a wiped sandbox and reports, but keeps, an orphan blob", async () => {
    const { project, sandbox } = await fx.newProject();
    const bytes = sample("png", 3_000);
    const { blobUrl: url } = await (await fx.upload(assetForm(project.id, "logo.png", bytes))).json();
    await putBlob(project, "stray.png", sample("png", 400));
    await sandbox.commands.run(`rm -rf -- "$ASSETS" "$MANIFEST"`, { envs: { ASSETS: ASSET_FILES_DIR, MANIFEST: ASSET_MANIFEST_PATH } });

    const report = await restoreProjectAssets({ userId: project.ownerId, projectId: project.id, sandbox }, maintenance());
    expect(report).toEqual({ restored: ["logo.png"], recorded: [], orphanBlobs: [pathnameOf(project, "stray.png")], missingBlobs: [] });
    expect(Buffer.from(await sandbox.files.read(`${ASSET_FILES_DIR}/logo.png`, { format: "bytes" }))).toEqual(Buffer.from(bytes));
    expect((await fx.manifest(sandbox))!.assets).toEqual({
      "logo.png": { blobUrl: url, localPath: `${ASSET_FILES_DIR}/logo.png`, contentType: "image/png", size: 3_000 },
    });
    expect(await blobBytes(pathnameOf(project, "stray.png"))).not.toBeNull();
    expect((await fx.leftovers(project, sandbox)).staging).toEqual([]);

    // Nothing to do the second time: no file copied, no sandbox command run.
    const run = vi.spyOn(sandbox.commands, "run");
    const again = await restoreProjectAssets({ userId: project.ownerId, projectId: project.id, sandbox }, maintenance());
    expect(again.restored).toEqual([]);
    expect(run).not.toHaveBeenCalled();
  });
});

describe("DELETE /api/assets/delete of assets the manifest does not list", () => {
  it("deletes an asset known only to the blob index, then answers 404", async () => {
    const { project, sandbox } = await fx.newProject();
    await putBlob(project, "left-behind.png", sample("png"));
    expect(await fx.manifest(sandbox)).toBeNull();

    expect((await fx.remove({ projectId: project.id, filename: "left-behind.png" })).status).toBe(200);
    expect(await blobBytes(pathnameOf(project, "left-behind.png"))).toBeNull();
    expect((await fx.remove({ projectId: project.id, filename: "left-behind.png" })).status).toBe(404);
  });

  it("deletes an asset whose sandbox file and manifest were wiped, by its record", async () => {
    const { project, sandbox } = await fx.newProject();
    expect((await fx.upload(assetForm(project.id, "logo.png", sample("png")))).status).toBe(200);
    await sandbox.commands.run(`rm -rf -- "$ASSETS" "$MANIFEST"`, { envs: { ASSETS: ASSET_FILES_DIR, MANIFEST: ASSET_MANIFEST_PATH } });

    expect((await fx.remove({ projectId: project.id, filename: "logo.png" })).status).toBe(200);
    expect(await blobPathnames(`${project.ownerId}/${project.id}/`)).toEqual([]);
    expect(await listProjectAssets(fx.db, project.id)).toEqual([]);
  });
});
