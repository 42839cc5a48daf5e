import crypto from "node:crypto";
import { describe, expect, it } from "vitest";
import { ASSET_FILES_DIR, MAX_UPLOAD_BYTES } from "@/lib/assets";
import { getBlobStore } from "@/lib/blob";
import type { Sandbox } from "@/lib/sandbox";
import { assetForm, blobBytes, NOTHING_STORED, setupAssetFixture } from "./fixture";
import { multipartBody, streamingRequest } from "./multipart";
import { pngChunks, sample, SVG_TEXT } from "./samples";

const fx = setupAssetFixture();

const sha256 = (bytes: Uint8Array) => crypto.createHash("sha256").update(bytes).digest("hex");
const readSandboxBytes = (sandbox: Sandbox, filename: string) =>
  sandbox.files.read(`${ASSET_FILES_DIR}/${filename}`, { format: "bytes" });

describe("POST /api/assets/upload", () => {
  it.each([
    ["logo.png", "png", "image/png"],
    ["icon.svg", "svg", "image/svg+xml"],
    ["Inter.woff2", "woff2", "font/woff2"],
    ["click.mp3", "mp3", "audio/mpeg"],
    ["intro.mp4", "mp4", "video/mp4"],
  ])("stores %s byte for byte in the blob store and the sandbox, and lists it in the manifest", async (filename, kind, contentType) => {
    const { project, sandbox } = await fx.newProject();
    const bytes = sample(kind, 5000);
    const response = await fx.upload(assetForm(project.id, filename, bytes));
    expect(response.status).toBe(200);
    const body = await response.json();
    const pathname = `${fx.owner.user.id}/${project.id}/assets/${filename}`;
    expect(body).toEqual({ blobUrl: expect.stringMatching(/^http/), pathname, filename, contentType, size: bytes.length });

    expect(Buffer.from((await blobBytes(body.blobUrl))!).equals(Buffer.from(bytes))).toBe(true);
    expect((await getBlobStore().head(body.blobUrl))?.contentType).toBe(contentType);
    expect(Buffer.from(await readSandboxBytes(sandbox, filename)).equals(Buffer.from(bytes))).toBe(true);
    expect(await fx.manifest(sandbox)).toEqual({
      assets: { [filename]: { blobUrl: body.blobUrl, localPath: `/home/user/app/assets/images/${filename}`, contentType, size: bytes.length } },
    });
    expect(await fx.leftovers(project, sandbox)).toMatchObject({ staging: [], spool: [] });
  });

  it("replaces an asset uploaded again under the same name and keeps the other entries", async () => {
    const { project, sandbox } = await fx.newProject();
    await fx.upload(assetForm(project.id, "a.png", sample("png", 300)));
    await fx.upload(assetForm(project.id, "b.gif", sample("gif")));
    const second = sample("png", 900);
    const response = await fx.upload(assetForm(project.id, "a.png", second));
    expect(response.status).toBe(200);
    expect(Buffer.from(await readSandboxBytes(sandbox, "a.png")).equals(Buffer.from(second))).toBe(true);
    expect(Buffer.from((await blobBytes((await response.json()).blobUrl))!).equals(Buffer.from(second))).toBe(true);
    const manifest = await fx.manifest(sandbox);
    expect(Object.keys(manifest!.assets).sort()).toEqual(["a.png", "b.gif"]);
    expect(manifest!.assets["a.png"].size).toBe(900);
  });

  it("keeps all 20 entries when 20 uploads to one project run at once", async () => {
    const { project, sandbox } = await fx.newProject();
    const names = Array.from({ length: 20 }, (_, index) => `file-${index}.png`);
    const responses = await Promise.all(names.map((name, index) => fx.upload(assetForm(project.id, name, sample("png", 200 + index)))));
    expect(responses.map((response) => response.status)).toEqual(names.map(() => 200));
    const manifest = await fx.manifest(sandbox);
    expect(Object.keys(manifest!.assets).sort()).toEqual([...names].sort());
    names.forEach((name, index) => expect(manifest!.assets[name].size).toBe(200 + index));
    const leftovers = await fx.leftovers(project, sandbox);
    expect(leftovers.files.sort()).toEqual([...names].sort());
    expect(leftovers.blobs).toHaveLength(20);
    expect(leftovers.staging).toEqual([]);
  });

  it("sanitises the filename it stores under", async () => {
    const { project, sandbox } = await fx.newProject();
    const response = await fx.upload(assetForm(project.id, "..\u202Emy  logo?.png", sample("png")));
    expect(response.status).toBe(200);
    expect((await response.json()).filename).toBe("my logo_.png");
    expect(Object.keys((await fx.manifest(sandbox))!.assets)).toEqual(["my logo_.png"]);
  });

  it("accepts exactly 10 MB, sent to the sandbox in parts and joined in order, and refuses 10 MB + 1 byte with 413", async () => {
    const { project, sandbox } = await fx.newProject();
    const sent = crypto.createHash("sha256");
    function* hashed() {
      for (const chunk of pngChunks(MAX_UPLOAD_BYTES)) {
        sent.update(chunk);
        yield chunk;
      }
    }
    const exact = await fx.uploadRequest(
      streamingRequest(fx.uploadUrl, multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: "big.png", body: hashed() }]), fx.owner.headers),
    );
    expect(exact.status).toBe(200);
    const stored = await exact.json();
    expect(stored.size).toBe(MAX_UPLOAD_BYTES);
    const digest = sent.digest("hex");
    expect(sha256(await readSandboxBytes(sandbox, "big.png"))).toBe(digest);
    expect(sha256((await blobBytes(stored.blobUrl))!)).toBe(digest);

    const other = await fx.newProject();
    const body = multipartBody([{ name: "projectId", body: other.project.id }, { name: "file", filename: "big.png", body: pngChunks(MAX_UPLOAD_BYTES + 1) }]);
    const tooBig = await fx.uploadRequest(streamingRequest(fx.uploadUrl, body, fx.owner.headers));
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).error.code).toBe("file_too_large");
    expect(await fx.leftovers(other.project, other.sandbox)).toEqual(NOTHING_STORED);
    expect((await fx.leftovers(project, sandbox)).files).toEqual(["big.png"]);
  });

  it("stops reading a body as soon as the file crosses the limit", async () => {
    const { project, sandbox } = await fx.newProject();
    const body = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: "huge.png", body: pngChunks(200 * 1024 * 1024) }]);
    const response = await fx.uploadRequest(streamingRequest(fx.uploadUrl, body, fx.owner.headers));
    expect(response.status).toBe(413);
    // Pulled: the limit plus what the stream pipeline had in flight, nowhere near 200 MB.
    expect(body.pulled()).toBeLessThan(MAX_UPLOAD_BYTES + 2 * 1024 * 1024);
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  it("refuses a declared Content-Length beyond the limit without reading the body", async () => {
    const { project, sandbox } = await fx.newProject();
    const body = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: "a.png", body: sample("png") }]);
    const response = await fx.uploadRequest(streamingRequest(fx.uploadUrl, body, { ...fx.owner.headers, "content-length": String(50 * 1024 * 1024) }));
    expect(response.status).toBe(413);
    expect(body.pulled()).toBe(0);
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  describe("refuses bad input with a JSON 4xx and stores nothing", () => {
    const cases: [string, (projectId: string) => FormData, number, string][] = [
      ["a disallowed extension", (id) => assetForm(id, "notes.txt", Buffer.from("hello")), 415, "unsupported_file_type"],
      ["an executable named .png", (id) => assetForm(id, "cat.png", sample("elf", 4096), "image/png"), 415, "unsupported_file_type"],
      ["a Windows executable named .jpg", (id) => assetForm(id, "cat.jpg", sample("exe", 4096), "image/jpeg"), 415, "unsupported_file_type"],
      ["a PNG named .gif", (id) => assetForm(id, "cat.gif", sample("png")), 415, "unsupported_file_type"],
      ["HTML named .svg", (id) => assetForm(id, "x.svg", Buffer.from("<html><script>alert(1)</script></html>")), 415, "unsupported_file_type"],
      ["an SVG named .png", (id) => assetForm(id, "x.png", Buffer.from(SVG_TEXT)), 415, "unsupported_file_type"],
      ["a file without extension", (id) => assetForm(id, "README", sample("png")), 415, "unsupported_file_type"],
      ["an empty file", (id) => assetForm(id, "empty.png", new Uint8Array(0)), 400, "empty_file"],
      ["a filename with nothing safe left", (id) => assetForm(id, "\u202E\u200B . ..", sample("png")), 400, "invalid_filename"],
      ["a filename that is only a parent reference", (id) => assetForm(id, "..", sample("png")), 400, "invalid_filename"],
      ["a missing projectId", () => assetForm(undefined, "a.png", sample("png")), 400, "missing_field"],
      ["a missing file", (id) => { const form = new FormData(); form.append("projectId", id); return form; }, 400, "missing_field"],
      ["a file sent as a text field", (id) => { const form = assetForm(id, "a.png", sample("png")); form.delete("file"); form.append("file", "not a file"); return form; }, 400, "missing_field"],
      ["two files", (id) => { const form = assetForm(id, "a.png", sample("png")); form.append("file", new Blob([sample("png").slice()]), "b.png"); return form; }, 400, "invalid_multipart"],
    ];
    it.each(cases)("%s", async (_, makeForm, status, code) => {
      const { project, sandbox } = await fx.newProject();
      const response = await fx.upload(makeForm(project.id));
      expect(response.status).toBe(status);
      const body = await response.json();
      expect(body.error.code).toBe(code);
      expect(body.error.message).toEqual(expect.any(String));
      expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
    });

    it.each([
      ["a body cut off in the middle of the file", { close: false }],
      ["garbage instead of parts", { raw: true }],
    ])("%s → 400", async (_, shape) => {
      const { project, sandbox } = await fx.newProject();
      const body = "raw" in shape
        ? multipartBody([{ raw: "this is not a multipart body at all" }])
        : multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: "a.png", body: sample("png") }], shape);
      const response = await fx.uploadRequest(streamingRequest(fx.uploadUrl, body, fx.owner.headers));
      expect(response.status).toBe(400);
      expect((await response.json()).error.code).toBe("invalid_multipart");
      expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
    });

    it("a body that is not multipart → 400", async () => {
      const { project } = await fx.newProject();
      const response = await fx.uploadRequest(
        new Request(fx.uploadUrl, { method: "POST", headers: { ...fx.owner.headers, "content-type": "application/json" }, body: JSON.stringify({ projectId: project.id }) }),
      );
      expect(response.status).toBe(400);
      expect((await response.json()).error.code).toBe("invalid_multipart");
    });
  });

  it("answers 404 for someone else's project or an unknown one, storing nothing", async () => {
    const { project, sandbox } = await fx.newProject();
    const foreign = await fx.upload(assetForm(project.id, "a.png", sample("png")), fx.stranger.headers);
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).error.code).toBe("project_not_found");
    const unknown = await fx.upload(assetForm(crypto.randomUUID(), "a.png", sample("png")));
    expect(unknown.status).toBe(404);
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  it("answers 401 without credentials", async () => {
    const { project } = await fx.newProject();
    const response = await fx.upload(assetForm(project.id, "a.png", sample("png")), {});
    expect(response.status).toBe(401);
  });
});
