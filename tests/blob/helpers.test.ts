import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { contentDisposition, contentTypeForPathname, isScriptCapable } from "@/lib/blob/content-type";
import { BlobOptionsError, BlobPathnameError } from "@/lib/blob/errors";
import { normalizeBody } from "@/lib/blob/options";
import { readParts } from "@/lib/blob/parts";
import { createBlobUrls, validatePathname, withRandomSuffix } from "@/lib/blob/pathname";
import { parseRange } from "@/lib/blob/serve";

describe("blob pathnames", () => {
  it("accepts every path layout of the spec (2.9)", () => {
    const id = "0b5e1c52-8f1e-4a57-9d4b-1f0a3e0c2d11";
    for (const pathname of [
      `bundles/${id}/abc123/ios/index.js`,
      `bundles/${id}/abc123/assets/4f1e.png`,
      `screenshots/${id}-mobile.png`,
      `chat-images/${id}/1711028389561-my photo.jpeg`,
      `tweet-images/42/0.webp`,
      `${id}/${id}/assets/logo.svg`,
    ]) {
      expect(validatePathname(pathname)).toBe(pathname);
    }
  });

  it("counts the byte limit in UTF-8", () => {
    expect(validatePathname("é".repeat(512))).toHaveLength(512);
    expect(() => validatePathname("é".repeat(513))).toThrow(BlobPathnameError);
    expect(() => validatePathname("a\u{10FFFF}")).toThrow(BlobPathnameError);
    expect(() => validatePathname("lone\uD800surrogate")).toThrow(BlobPathnameError);
  });

  it("inserts the random suffix before the last extension of the last segment", () => {
    const suffix = "-[A-Za-z0-9]{30}";
    expect(withRandomSuffix("a/photo.png")).toMatch(new RegExp(`^a/photo${suffix}\\.png$`));
    expect(withRandomSuffix("archive.tar.gz")).toMatch(new RegExp(`^archive\\.tar${suffix}\\.gz$`));
    expect(withRandomSuffix("dir.v2/notes")).toMatch(new RegExp(`^dir\\.v2/notes${suffix}$`));
    expect(withRandomSuffix("config/.env")).toMatch(new RegExp(`^config/\\.env${suffix}$`));
  });

  it("maps pathnames to URLs and back, refusing foreign URLs", () => {
    const urls = createBlobUrls("https://app.example/blob/");
    const pathname = "a b/ü#?.txt";
    const url = urls.urlFor(pathname);
    expect(url).toBe("https://app.example/blob/a%20b/%C3%BC%23%3F.txt");
    expect(urls.pathnameOf(url)).toBe(pathname);
    expect(urls.pathnameOf(urls.downloadUrlFor(pathname))).toBe(pathname);
    expect(urls.pathnameOf(pathname)).toBe(pathname);
    expect(() => urls.pathnameOf("https://elsewhere.example/blob/a.txt")).toThrow(BlobPathnameError);
    expect(() => urls.pathnameOf("https://app.example/blob/a/%2e%2e/b")).toThrow(BlobPathnameError);
    expect(() => urls.pathnameOf("https://app.example/blob/%E0%A4%A")).toThrow(BlobPathnameError);
  });
});

describe("blob content types and headers", () => {
  it("detects types case-insensitively and falls back to octet-stream", () => {
    expect(contentTypeForPathname("a/B.JPEG")).toBe("image/jpeg");
    expect(contentTypeForPathname("a.b/file")).toBe("application/octet-stream");
    expect(contentTypeForPathname(".gitignore")).toBe("application/octet-stream");
  });

  it("builds injection-free Content-Disposition values with a UTF-8 name when needed", () => {
    expect(contentDisposition("inline", "photo.png")).toBe('inline; filename="photo.png"');
    expect(contentDisposition("attachment", 'say "hi".txt')).toBe(`attachment; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`);
    expect(contentDisposition("inline", "résumé (1).pdf")).toBe(`inline; filename="r_sum_ (1).pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%281%29.pdf`);
  });

  it("flags documents that can run script", () => {
    for (const type of ["image/svg+xml", "text/html; charset=utf-8", "application/xhtml+xml", "text/xml", "application/javascript"]) {
      expect([type, isScriptCapable(type)]).toEqual([type, true]);
    }
    for (const type of ["image/png", "application/json", "font/woff2", "video/mp4"]) {
      expect([type, isScriptCapable(type)]).toEqual([type, false]);
    }
  });

  it("parses single byte ranges", () => {
    expect(parseRange(null, 10)).toBeNull();
    expect(parseRange("bytes=2-4", 10)).toEqual({ start: 2, end: 4 });
    expect(parseRange("bytes=8-", 10)).toEqual({ start: 8, end: 9 });
    expect(parseRange("bytes=-3", 10)).toEqual({ start: 7, end: 9 });
    expect(parseRange("bytes=-30", 10)).toEqual({ start: 0, end: 9 });
    expect(parseRange("bytes=10-", 10)).toBe("unsatisfiable");
    expect(parseRange("bytes=-0", 10)).toBe("unsatisfiable");
    expect(parseRange("bytes=5-2", 10)).toBeNull();
    expect(parseRange("bytes=0-1,3-4", 10)).toBeNull();
    expect(parseRange("items=0-1", 10)).toBeNull();
  });
});

describe("blob bodies and parts", () => {
  it("refuses bodies that are not bytes", () => {
    for (const body of [{ a: 1 }, 42, null, undefined]) {
      expect(() => normalizeBody(body as never)).toThrow(BlobOptionsError);
    }
  });

  async function cut(chunks: number[], partSize: number) {
    const source = Readable.from(chunks.map((length, i) => Buffer.alloc(length, i)));
    const parts: { size: number; last: boolean }[] = [];
    for await (const part of readParts(source, partSize)) parts.push({ size: part.data.length, last: part.last });
    return parts;
  }

  it("cuts streams into exact parts and marks the last one", async () => {
    expect(await cut([], 4)).toEqual([{ size: 0, last: true }]);
    expect(await cut([4], 4)).toEqual([{ size: 4, last: true }]);
    expect(await cut([3, 3], 4)).toEqual([{ size: 4, last: false }, { size: 2, last: true }]);
    expect(await cut([10], 4)).toEqual([{ size: 4, last: false }, { size: 4, last: false }, { size: 2, last: true }]);
    expect(await cut([2, 2, 2, 2], 4)).toEqual([{ size: 4, last: false }, { size: 4, last: true }]);
  });

  it("keeps the bytes in order across part boundaries", async () => {
    const source = Readable.from([Buffer.from("abc"), Buffer.from("defg"), Buffer.from("h")]);
    const parts: string[] = [];
    for await (const part of readParts(source, 3)) parts.push(part.data.toString());
    expect(parts).toEqual(["abc", "def", "gh"]);
  });
});
