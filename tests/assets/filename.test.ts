import { describe, expect, it } from "vitest";
import { extensionOf, InvalidFilenameError, MAX_FILENAME_BYTES, sanitizeFilename } from "@/lib/assets";

describe("sanitizeFilename", () => {
  it.each([
    ["logo.png", "logo.png"],
    ["../../etc/passwd.png", "passwd.png"],
    ["C:\\Users\\me\\photo.jpg", "photo.jpg"],
    ["a\u0000b\u0001c\u007f\u009b.png", "abc.png"],
    [".hidden.png", "hidden.png"],
    ["...dots.png", "dots.png"],
    ["  spaced \t\n out  .png", "spaced out .png"],
    ["trailing.png. . ", "trailing.png"],
    ["evil\u202Egnp.exe", "evilgnp.exe"],
    ["zero\u200Bwidth.png", "zerowidth.png"],
    ["line\u2028break.png", "linebreak.png"],
    ['what?<>:"|*.png', "what_______.png"],
    ["Cafe\u0301.png", "Caf\u00e9.png"],
    ["日本語のファイル.png", "日本語のファイル.png"],
    ["emoji 😀.png", "emoji 😀.png"],
    ["lone\uD800surrogate.png", "lonesurrogate.png"],
    ["noncharacter\uFFFF\u{10FFFF}.png", "noncharacter.png"],
  ])("%j → %j", (raw, expected) => {
    expect(sanitizeFilename(raw)).toBe(expected);
  });

  it.each(["", "..", ".", "/", "a/", "\\", "\u202E\u200B", " . . ", "\u0000\u0001"])("refuses %j with 400", (raw) => {
    expect(() => sanitizeFilename(raw)).toThrow(InvalidFilenameError);
    try {
      sanitizeFilename(raw);
    } catch (error) {
      expect((error as InvalidFilenameError).status).toBe(400);
    }
  });

  it("shortens long names to the byte limit on code-point boundaries, keeping the extension", () => {
    const ascii = sanitizeFilename(`${"a".repeat(500)}.woff2`);
    expect(ascii).toBe(`${"a".repeat(MAX_FILENAME_BYTES - 6)}.woff2`);
    const wide = sanitizeFilename(`${"😀".repeat(100)}.png`);
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(MAX_FILENAME_BYTES);
    expect(wide.endsWith(".png")).toBe(true);
    expect(wide).not.toMatch(/\p{Cs}/u);
    const noExtension = sanitizeFilename("b".repeat(300));
    expect(noExtension).toBe("b".repeat(MAX_FILENAME_BYTES));
  });

  it("is idempotent", () => {
    for (const raw of ["../x/..a b.PNG", "Cafe\u0301 ?.svg", `${"é".repeat(300)}.ttf`]) {
      const once = sanitizeFilename(raw);
      expect(sanitizeFilename(once)).toBe(once);
    }
  });
});

describe("extensionOf", () => {
  it.each([
    ["a.PNG", "png"],
    ["archive.tar.gz", "gz"],
    ["README", ""],
    ["png", ""],
  ])("%j → %j", (name, extension) => {
    expect(extensionOf(name)).toBe(extension);
  });
});
