import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { provisionManagedProject, type ProvisionedBackendProject } from "@/lib/backend";
import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { STORAGE_UPLOAD_LIMIT_BYTES } from "@/lib/emulator/http";
import { listDocuments } from "@/lib/emulator/store";
import { getStore } from "@/lib/store";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";
import { pngImage } from "../bundles/build-fixture";
import { launchBrowser, recordPageErrors } from "../e2e/browser";
import { pngSize } from "../helpers/png";
import { convexAppDir, fetchOnNewConnection, runConvexCli } from "./helpers";

/** Generous for a loaded machine. */
const EMULATOR_OPTIONS = { functionTimeoutMs: { query: 20_000, mutation: 20_000, action: 60_000 }, analyseTimeoutMs: 30_000 };

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  images: defineTable({ storageId: v.id("_storage"), name: v.string() }),
});
`;

/** What an AI-built app writes for image upload (docs.convex.dev/file-storage/upload-files). */
const FILES = `import { v } from "convex/values";
import { action, mutation, query } from "./_generated/server";

export const generateUploadUrl = mutation({ args: {}, handler: (ctx) => ctx.storage.generateUploadUrl() });

export const save = mutation({
  args: { storageId: v.id("_storage"), name: v.string() },
  handler: (ctx, args) => ctx.db.insert("images", args),
});

export const list = query({
  args: {},
  handler: async (ctx) =>
    Promise.all(
      (await ctx.db.query("images").collect()).map(async (image) => ({
        name: image.name,
        url: await ctx.storage.getUrl(image.storageId),
        metadata: await ctx.storage.getMetadata(image.storageId),
        file: await ctx.db.system.get(image.storageId),
      })),
    ),
});

export const remove = mutation({
  args: { storageId: v.id("_storage") },
  handler: async (ctx, { storageId }) => {
    await ctx.storage.delete(storageId);
    for (const image of await ctx.db.query("images").collect()) if (image.storageId === storageId) await ctx.db.delete(image._id);
  },
});

export const storeText = action({
  args: { text: v.string() },
  handler: async (ctx, { text }) => {
    const storageId = await ctx.storage.store(new Blob([text], { type: "text/plain" }));
    const back = await ctx.storage.get(storageId);
    return { storageId, text: await back.text(), type: back.type, url: await ctx.storage.getUrl(storageId) };
  },
});
`;

/**
 * An upload that declares one byte over the limit and waits for the answer before sending any:
 * the deployment refuses it from the declared size. (A client that sends the whole body first may
 * see the connection closed before it reads the 413: the rest of a refused body is never read.)
 */
function declaredOversizedUpload(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const headers = { "content-type": "application/octet-stream", "content-length": String(STORAGE_UPLOAD_LIMIT_BYTES + 1) };
    const request = http.request(url, { method: "POST", headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        request.destroy();
        resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.flushHeaders();
  });
}

const sha256Base64 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("base64");

/**
 * File storage of an emulated deployment, with the real clients: functions pushed by the `convex`
 * CLI, called by ConvexHttpClient, uploads and downloads by fetch, the image shown by Chromium.
 */
describe("file storage of the emulated deployment", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let client: ConvexHttpClient;
  let cwd: string;
  const image = pngImage(24, 7);

  beforeAll(async () => {
    emulator = await startTestEmulator(EMULATOR_OPTIONS);
    project = await provisionManagedProject({ ...emulator.team, projectName: "storage app" }, emulator.management);
    cwd = convexAppDir({ "schema.ts": SCHEMA, "files.ts": FILES });
    const pushed = await runConvexCli(cwd, ["dev", "--once", "--typecheck", "disable"], { url: project.deploymentUrl, adminKey: project.token });
    expect(pushed.output).toContain("Convex functions ready!");
    client = new ConvexHttpClient(project.deploymentUrl);
  }, 600_000);
  afterAll(async () => {
    await emulator?.server.close();
    if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
  });

  const upload = (url: string, body: Uint8Array, contentType = "image/png") => fetch(url, { method: "POST", headers: { "content-type": contentType }, body: new Uint8Array(body) });
  const storageDocuments = async () => (await listDocuments(await getStore(), project.deploymentName)).filter(([id]) => id.endsWith("_storage"));

  it("an upload URL on the deployment takes the image once; getUrl serves it with its type, ETag and ranges; Chromium shows it", { timeout: 180_000 }, async () => {
    const uploadUrl: string = await client.mutation(anyApi.files.generateUploadUrl, {});
    expect(new URL(uploadUrl).origin).toBe(new URL(project.deploymentUrl).origin);
    expect(new URL(uploadUrl).pathname).toBe("/api/storage/upload");

    const uploaded = await upload(uploadUrl, image);
    expect(uploaded.status).toBe(200);
    const { storageId } = await uploaded.json();
    expect(storageId).toEqual(expect.any(String));
    // Single use: the same URL again stores nothing.
    const again = await upload(uploadUrl, image);
    expect(again.status).toBe(401);
    expect(await again.json()).toEqual({ code: "StorageTokenInvalid", message: "Couldn't decode the StoreFileAuthorization token" });
    expect(await storageDocuments()).toHaveLength(1);

    await client.mutation(anyApi.files.save, { storageId, name: "cat" });
    const [listed] = await client.query(anyApi.files.list, {});
    expect(listed.url).toBe(`${project.deploymentUrl}/api/storage/${storageId}`);
    expect(listed.metadata).toEqual({ storageId, sha256: sha256Base64(image), size: image.byteLength, contentType: "image/png" });
    expect(listed.file).toEqual({ _id: storageId, _creationTime: expect.any(Number), sha256: sha256Base64(image), size: image.byteLength, contentType: "image/png" });

    const served = await fetch(listed.url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(image);
    const etag = served.headers.get("etag");
    expect(etag).toBeTruthy();
    expect((await fetch(listed.url, { headers: { "if-none-match": etag! } })).status).toBe(304);
    const range = await fetch(listed.url, { headers: { range: "bytes=0-7" } });
    expect(range.status).toBe(206);
    expect(new Uint8Array(await range.arrayBuffer())).toEqual(image.slice(0, 8));

    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const errors = recordPageErrors(page);
      page.setDefaultTimeout(120_000);
      await page.setContent(`<img id="cat" src="${listed.url}">`);
      await page.waitForFunction(() => (document.getElementById("cat") as HTMLImageElement).complete);
      expect(await page.$eval("#cat", (element) => [(element as HTMLImageElement).naturalWidth, (element as HTMLImageElement).naturalHeight])).toEqual([24, 24]);
      expect(pngSize(image)).toEqual({ width: 24, height: 24 });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("an action stores and reads a file; its URL serves it", { timeout: 120_000 }, async () => {
    const stored = await client.action(anyApi.files.storeText, { text: "hello storage" });
    expect(stored).toEqual({ storageId: expect.any(String), text: "hello storage", type: "text/plain", url: `${project.deploymentUrl}/api/storage/${stored.storageId}` });
    const served = await fetch(stored.url);
    expect(served.headers.get("content-type")).toBe("text/plain");
    expect(await served.text()).toBe("hello storage");
  });

  it("refuses an expired upload URL, an upload over the limit and a file of another deployment, storing nothing", { timeout: 120_000 }, async () => {
    const before = await storageDocuments();
    const expiring: string = await client.mutation(anyApi.files.generateUploadUrl, {});
    // An hour and a bit later for this token.
    await (await getStore()).query("update emulator_storage_uploads set issued_at = issued_at - interval '61 minutes' where deployment_name = $1", [project.deploymentName]);
    const expired = await upload(expiring, image);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ code: "StorageTokenExpired", message: "Store File Authorization expired" });

    const tooLarge = await declaredOversizedUpload(await client.mutation(anyApi.files.generateUploadUrl, {}));
    expect(tooLarge.status).toBe(413);
    expect((tooLarge.body as { code: string }).code).toBe("RequestTooLarge");
    expect(await storageDocuments()).toEqual(before);

    const other = await provisionManagedProject({ ...emulator.team, projectName: "other storage app" }, emulator.management);
    const [listed] = await client.query(anyApi.files.list, {});
    const foreign = await fetch(listed.url.replace(project.deploymentUrl, other.deploymentUrl));
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).code).toBe("FileNotFound");
    const made = await fetch(`${project.deploymentUrl}/api/storage/${encodeURIComponent("not-a-file")}`);
    expect(made.status).toBe(404);
  });

  it("files survive a server restart; a deleted file's URL answers 404 and its blob goes", { timeout: 180_000 }, async () => {
    const [listed] = await client.query(anyApi.files.list, {});
    await emulator.server.close();
    emulator = await startTestEmulator(EMULATOR_OPTIONS);
    await emulator.server.emulator.start();
    // Connections to the old server are gone: every request of this test opens its own.
    client = new ConvexHttpClient(project.deploymentUrl, { fetch: fetchOnNewConnection });
    const served = await fetchOnNewConnection(listed.url);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(image);

    const blobsOfDeployment = async () => (await listAllBlobs(getBlobStore(), `emulator-storage/${project.deploymentName}/`)).length;
    expect(await blobsOfDeployment()).toBe(2);
    await client.mutation(anyApi.files.remove, { storageId: listed.metadata.storageId });
    expect((await fetchOnNewConnection(listed.url)).status).toBe(404);
    expect(await client.query(anyApi.files.list, {})).toEqual([]);
    // The action's text file stays.
    await vi.waitFor(async () => expect(await blobsOfDeployment()).toBe(1), { timeout: 60_000, interval: 250 });
  });
});
