import { describe, expect, it, vi } from "vitest";
import { getBlobStore } from "@/lib/blob";
import { BlobStoreUnavailableError } from "@/lib/blob/errors";
import { CommandExitError } from "@/lib/sandbox";
import { assetForm, NOTHING_STORED, setupAssetFixture } from "./fixture";
import { sample } from "./samples";

const fx = setupAssetFixture();

const commandFailure = () => new CommandExitError({ exitCode: 1, stdout: "", stderr: "mv: cannot move: Input/output error" });

describe("an asset upload either fully happens or leaves nothing", () => {
  it("deletes the blob when the sandbox commit fails after the blob put", async () => {
    const { project, sandbox } = await fx.newProject();
    const put = vi.spyOn(getBlobStore(), "put");
    const run = sandbox.commands.run.bind(sandbox.commands);
    vi.spyOn(sandbox.commands, "run").mockImplementation(((cmd: string, options?: object) =>
      cmd.includes("$MANIFEST_TEMP") ? Promise.reject(commandFailure()) : run(cmd, options as never)) as typeof sandbox.commands.run);

    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")));
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe("sandbox_command_failed");
    expect(put).toHaveBeenCalledTimes(1);
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  it("removes the staged sandbox file when the blob put fails after it", async () => {
    const { project, sandbox } = await fx.newProject();
    const write = vi.spyOn(sandbox.files, "write");
    vi.spyOn(getBlobStore(), "put").mockRejectedValueOnce(new BlobStoreUnavailableError("The blob store is down."));

    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")));
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe("blob_store_failed");
    expect(write).toHaveBeenCalled();
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  it("puts nothing in the blob store when the sandbox write fails", async () => {
    const { project, sandbox } = await fx.newProject();
    const put = vi.spyOn(getBlobStore(), "put");
    vi.spyOn(sandbox.files, "write").mockRejectedValueOnce(commandFailure());

    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")));
    expect(response.status).toBe(502);
    expect(put).not.toHaveBeenCalled();
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  it("keeps earlier assets intact when a later upload fails", async () => {
    const { project, sandbox } = await fx.newProject();
    expect((await fx.upload(assetForm(project.id, "kept.png", sample("png")))).status).toBe(200);
    const before = await fx.leftovers(project, sandbox);
    vi.spyOn(getBlobStore(), "put").mockRejectedValueOnce(new BlobStoreUnavailableError("The blob store is down."));
    expect((await fx.upload(assetForm(project.id, "lost.png", sample("png")))).status).toBe(502);
    expect(await fx.leftovers(project, sandbox)).toEqual(before);
  });
});
