import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptFile, ALLOWED_FILE_TYPES, detectSignature, hasSvgRoot, UnsupportedFileTypeError, type ReceivedFile } from "@/lib/assets";
import { sample, SVG_TEXT } from "./samples";

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "asset-content-"));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function received(filename: string, bytes: Uint8Array | string): Promise<ReceivedFile> {
  const file = path.join(dir, crypto.randomUUID());
  await fs.writeFile(file, bytes);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { path: file, filename, declaredType: "application/octet-stream", size: Buffer.byteLength(bytes), sha256 };
}

describe("detectSignature", () => {
  it.each(Object.keys(ALLOWED_FILE_TYPES))("recognises a .%s sample as an allowed signature of its extension", async (extension) => {
    const file = await received(`x.${extension}`, sample(extension, 4096));
    expect(ALLOWED_FILE_TYPES[extension].signatures).toContain(await detectSignature(file.path));
  });

  it("reports executables and plain text for what they are", async () => {
    expect(await detectSignature((await received("x", sample("elf"))).path)).toBe("elf");
    expect(await detectSignature((await received("x", sample("exe"))).path)).toBe("exe");
    expect(await detectSignature((await received("x", "just text")).path)).toBeUndefined();
  });
});

describe("hasSvgRoot", () => {
  it.each([
    ["a bare root", '<svg xmlns="http://www.w3.org/2000/svg"/>'],
    ["a declaration, comments and a DOCTYPE with internal subset", `\uFEFF<?xml version="1.0"?>\n<!-- a > b -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" [ <!ENTITY x "y"> ]>\n<svg>`],
    ["the sample", SVG_TEXT],
  ])("accepts %s", (_, text) => {
    expect(hasSvgRoot(text)).toBe(true);
  });

  it.each([
    ["HTML", "<html><svg></svg></html>"],
    ["an svg-prefixed element", "<svgfoo/>"],
    ["text before the root", "hello <svg/>"],
    ["an unterminated comment", "<!-- <svg/>"],
    ["nothing", ""],
  ])("refuses %s", (_, text) => {
    expect(hasSvgRoot(text)).toBe(false);
  });
});

describe("acceptFile", () => {
  const assets = { kinds: ["image", "font", "audio", "video"] as const };

  it("takes the content type of the verified format, not the client's", async () => {
    const file = { ...(await received("a.JPEG", sample("jpg"))), declaredType: "text/html" };
    expect(await acceptFile(file, assets)).toMatchObject({ filename: "a.JPEG", contentType: "image/jpeg", size: 256 });
  });

  it("refuses SVG that is not valid UTF-8", async () => {
    const bytes = Buffer.concat([Buffer.from("<svg>"), Buffer.from([0xff, 0xfe, 0xfd])]);
    await expect(acceptFile(await received("a.svg", bytes), assets)).rejects.toBeInstanceOf(UnsupportedFileTypeError);
  });

  it("infers a missing extension from the content only when the policy says so", async () => {
    const images = { kinds: ["image"] as const, inferMissingExtension: true };
    expect(await acceptFile(await received("blob", sample("png")), images)).toMatchObject({ filename: "blob.png", contentType: "image/png" });
    expect(await acceptFile(await received("image", SVG_TEXT), images)).toMatchObject({ filename: "image.svg" });
    await expect(acceptFile(await received("blob", sample("png")), assets)).rejects.toThrow(/without an extension/);
    await expect(acceptFile(await received("blob", sample("ttf")), images)).rejects.toBeInstanceOf(UnsupportedFileTypeError);
  });

  it("limits the policy to its kinds", async () => {
    await expect(acceptFile(await received("font.ttf", sample("ttf")), { kinds: ["image"] })).rejects.toThrow(/\.ttf files are not allowed; allowed: jpg, jpeg, png, gif, webp, svg, ico\./);
  });
});
