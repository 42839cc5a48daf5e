import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as uploadImageRoute } from "@/app/api/upload-image/route";
import { MAX_UPLOAD_BYTES } from "@/lib/assets";
import { getBlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { getStore } from "@/lib/store";
import { assetForm, blobBytes, blobPathnames } from "../assets/fixture";
import { multipartBody, streamingRequest } from "../assets/multipart";
import { pngChunks, sample, SVG_TEXT } from "../assets/samples";
import { createTestUser } from "../helpers/users";

const IMAGE_URL = "http://localhost:3000/api/upload-image";
const noContext = { params: Promise.resolve({}) } as never;
let user: Awaited<ReturnType<typeof createTestUser>>;

beforeAll(async () => {
  user = await createTestUser(await getStore());
});
afterEach(() => {
  vi.useRealTimers();
});

const imageForm = (filename: string, bytes: Uint8Array, type = "image/png") => assetForm(undefined, filename, bytes, type);
const upload = (body: FormData, headers: Record<string, string> = user.headers) =>
  uploadImageRoute(new Request(IMAGE_URL, { method: "POST", headers, body }), noContext);
const chatImages = () => blobPathnames(`chat-images/${user.user.id}/`);
const spoolFiles = () => fs.readdir(path.join(getConfig().DATA_DIR, "uploads")).catch(() => []);

describe("POST /api/upload-image", () => {
  it("stores the image at chat-images/<user>/<timestamp>-<name> with a random suffix, byte for byte", async () => {
    vi.useFakeTimers({ now: new Date("2026-05-01T12:00:00Z"), toFake: ["Date"] });
    const bytes = sample("png", 3000);
    const response = await upload(imageForm("screen shot.png", bytes));
    expect(response.status).toBe(200);
    const body = await response.json();
    const timestamp = Date.parse("2026-05-01T12:00:00Z");
    expect(body).toEqual({
      url: expect.stringMatching(/^http/),
      pathname: expect.stringMatching(new RegExp(`^chat-images/${user.user.id}/${timestamp}-screen shot-[A-Za-z0-9]{30}\\.png$`)),
      contentType: "image/png",
    });
    expect(Buffer.from((await blobBytes(body.url))!).equals(Buffer.from(bytes))).toBe(true);
    expect((await getBlobStore().head(body.url))?.contentType).toBe("image/png");
  });

  it("gives two uploads of the same name different pathnames", async () => {
    const [a, b] = await Promise.all([upload(imageForm("same.gif", sample("gif"))), upload(imageForm("same.gif", sample("gif")))]);
    expect((await a.json()).pathname).not.toBe((await b.json()).pathname);
  });

  it("takes the content type from the verified image, and the extension from it when the name has none", async () => {
    const response = await upload(imageForm("blob", Buffer.from(SVG_TEXT), "text/html"));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.contentType).toBe("image/svg+xml");
    expect(body.pathname).toMatch(/-blob-[A-Za-z0-9]{30}\.svg$/);
  });

  describe("refuses and stores nothing", () => {
    it.each([
      ["a font", () => imageForm("font.ttf", sample("ttf")), 415],
      ["a video", () => imageForm("clip.mp4", sample("mp4")), 415],
      ["an executable named .png", () => imageForm("cat.png", sample("elf", 2048)), 415],
      ["an executable without extension", () => imageForm("cat", sample("elf", 2048)), 415],
      ["a name with nothing safe left", () => imageForm("..", sample("png")), 400],
      ["a form without file", () => new FormData(), 400],
    ])("%s", async (_, makeForm, status) => {
      const before = await chatImages();
      const response = await upload(makeForm());
      expect(response.status).toBe(status);
      expect((await response.json()).error).toEqual({ code: expect.any(String), message: expect.any(String) });
      expect(await chatImages()).toEqual(before);
      expect(await spoolFiles()).toEqual([]);
    });

    it("an image of 10 MB + 1 byte, with 413", async () => {
      const before = await chatImages();
      const body = multipartBody([{ name: "file", filename: "big.png", body: pngChunks(MAX_UPLOAD_BYTES + 1) }]);
      const response = await uploadImageRoute(streamingRequest(IMAGE_URL, body, user.headers), noContext);
      expect(response.status).toBe(413);
      expect(await chatImages()).toEqual(before);
      expect(await spoolFiles()).toEqual([]);
    });
  });

  it("answers 401 without credentials", async () => {
    expect((await upload(imageForm("a.png", sample("png")), {})).status).toBe(401);
  });
});
