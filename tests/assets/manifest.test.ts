import { describe, expect, it } from "vitest";
import { parseAssetManifest, serializeAssetManifest } from "@/lib/assets";

const entry = { blobUrl: "http://localhost/blob/u/p/assets/a.png", localPath: "/home/user/app/assets/images/a.png", contentType: "image/png", size: 3 };

describe("parseAssetManifest", () => {
  it("reads a manifest and keeps keys other than assets", () => {
    const text = serializeAssetManifest({ assets: { "a.png": entry }, version: 2 });
    expect(parseAssetManifest(text, "sb")).toEqual({ assets: { "a.png": entry }, version: 2 });
    expect(text.endsWith("}\n")).toBe(true);
  });

  it.each([
    ["text that is not JSON", "{ not json", { assets: {} }],
    ["an array", "[]", { assets: {} }],
    ["assets that are not an object", '{"assets": [1], "note": "x"}', { assets: {}, note: "x" }],
  ])("starts over from %s", (_, text, expected) => {
    expect(parseAssetManifest(text, "sb")).toEqual(expected);
  });

  it("treats __proto__ as an ordinary entry name", () => {
    const parsed = parseAssetManifest('{"assets": {"__proto__": {"size": 1}}}', "sb");
    expect(Object.hasOwn(parsed.assets, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(parsed.assets)).toBe(Object.prototype);
  });
});
