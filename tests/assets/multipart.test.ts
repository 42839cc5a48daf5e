import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formSourceOfRequest, MalformedUploadError, type ReceivedForm, UploadTooLargeError, withReceivedForm, type ReceiveOptions } from "@/lib/assets";
import { multipartBody, streamingRequest } from "./multipart";

let options: ReceiveOptions;
beforeAll(async () => {
  options = { fileField: "file", maxFileBytes: 1000, spoolDir: await fs.mkdtemp(path.join(os.tmpdir(), "asset-spool-")) };
});
afterAll(async () => {
  await fs.rm(options.spoolDir, { recursive: true, force: true });
});

/** withReceivedForm on a fetch Request, as the routes call it. */
const receiveForm = <T>(request: Request, receiveOptions: ReceiveOptions, handle: (form: ReceivedForm) => Promise<T>) =>
  withReceivedForm(formSourceOfRequest(request), receiveOptions, handle);

const request = (...args: Parameters<typeof multipartBody>) => streamingRequest("http://localhost/upload", multipartBody(...args));

describe("withReceivedForm", () => {
  it("spools the file, collects the fields and deletes the spool file afterwards", async () => {
    const bytes = new Uint8Array(1000).map((_, index) => index % 251);
    let spooled = "";
    const seen = await receiveForm(
      request([
        { name: "projectId", body: "p-1" },
        { name: "file", filename: "photo.png", contentType: "image/png", body: bytes },
        { name: "extra", body: "ignored but kept" },
      ]),
      options,
      async (form) => {
        spooled = form.file!.path;
        expect(new Uint8Array(await fs.readFile(spooled))).toEqual(bytes);
        return form;
      },
    );
    expect(seen.fields).toEqual({ projectId: "p-1", extra: "ignored but kept" });
    expect(seen.file).toMatchObject({ filename: "photo.png", declaredType: "image/png", size: 1000 });
    await expect(fs.stat(spooled)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("reads UTF-8 filenames and takes the fields after the file too", async () => {
    const form = await receiveForm(
      request([{ name: "file", filename: "café 日本.png", body: "x" }, { name: "projectId", body: "late" }]),
      options,
      async (received) => received,
    );
    expect(form.file?.filename).toBe("café 日本.png");
    expect(form.fields.projectId).toBe("late");
  });

  it("deletes the spool file when the handler throws", async () => {
    const failure = new Error("handler failed");
    await expect(receiveForm(request([{ name: "file", filename: "a.png", body: "x" }]), options, async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(await fs.readdir(options.spoolDir)).toEqual([]);
  });

  it("ignores file parts under other field names", async () => {
    const form = await receiveForm(request([{ name: "other", filename: "a.png", body: "x" }]), options, async (received) => received);
    expect(form.file).toBeUndefined();
  });

  it.each([
    ["a file one byte over the limit", [{ name: "file", filename: "a.png", body: new Uint8Array(1001) }], {}, UploadTooLargeError],
    ["a field longer than 1 KiB", [{ name: "projectId", body: "p".repeat(1025) }], {}, MalformedUploadError],
    ["a missing final boundary", [{ name: "file", filename: "a.png", body: "x" }], { close: false }, MalformedUploadError],
    ["a malformed part header", [{ raw: "--B\r\nContent-Disposition form-data\r\n\r\nx\r\n--B--\r\n" }], { boundary: "B" }, MalformedUploadError],
    ["too many fields", Array.from({ length: 11 }, (_, index) => ({ name: `f${index}`, body: "x" })), {}, MalformedUploadError],
  ] as const)("refuses %s, leaving no spool file", async (_, parts, shape, errorClass) => {
    await expect(receiveForm(request([...parts], shape), options, async () => "handled")).rejects.toBeInstanceOf(errorClass);
    expect(await fs.readdir(options.spoolDir)).toEqual([]);
  });

  it("answers exactly the file limit without error", async () => {
    const form = await receiveForm(request([{ name: "file", filename: "a.png", body: new Uint8Array(1000) }]), options, async (received) => received);
    expect(form.file?.size).toBe(1000);
  });

  it("refuses a request without body or boundary", async () => {
    await expect(receiveForm(new Request("http://localhost/upload", { method: "POST" }), options, async () => 1)).rejects.toBeInstanceOf(MalformedUploadError);
    const noBoundary = new Request("http://localhost/upload", { method: "POST", headers: { "content-type": "multipart/form-data" }, body: "x" });
    await expect(receiveForm(noBoundary, options, async () => 1)).rejects.toBeInstanceOf(MalformedUploadError);
  });

  it("stops when the client aborts the body midway", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('--B\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc'));
        controller.error(new Error("connection reset"));
      },
    });
    const aborted = new Request("http://localhost/upload", {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=B" },
      body,
      duplex: "half",
    } as RequestInit);
    await expect(receiveForm(aborted, options, async () => 1)).rejects.toBeInstanceOf(MalformedUploadError);
    expect(await fs.readdir(options.spoolDir)).toEqual([]);
  });
});
