import crypto from "node:crypto";
import zlib from "node:zlib";
import { GET as serveBlobRoute } from "@/app/blob/[...pathname]/route";
import { listAllBlobs, type BlobStore } from "@/lib/blob";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";

/**
 * Binary bytes: every byte value, in an order that holds sequences invalid as UTF-8, so a text
 * read anywhere between the export and the store changes them.
 */
export function binaryBytes(length: number, seed: number, header: number[] = []): Uint8Array {
  const bytes = new Uint8Array(length);
  bytes.set(header);
  for (let i = header.length; i < length; i++) bytes[i] = (i * 151 + seed * 31 + 7) & 0xff;
  return bytes;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid RGB PNG (Metro reads image sizes), `size`×`size`, with pixels that depend on `seed`. */
export function pngImage(size: number, seed: number): Uint8Array {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size * 3; x++) rows[y * (1 + size * 3) + 1 + x] = (x * 37 + y * 11 + seed * 53) & 0xff;
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([signature, pngChunk("IHDR", header), pngChunk("IDAT", zlib.deflateSync(rows)), pngChunk("IEND", Buffer.alloc(0))]));
}

/** The app's binary assets: a logo at three scales and a font. */
export const FIXTURE_ASSETS = {
  "assets/images/logo.png": pngImage(16, 1),
  "assets/images/logo@2x.png": pngImage(32, 2),
  "assets/images/logo@3x.png": pngImage(48, 3),
  "assets/fonts/Brand.ttf": binaryBytes(4000, 4, [0x00, 0x01, 0x00, 0x00]),
};

export const md5 = (bytes: Uint8Array) => crypto.createHash("md5").update(bytes).digest("hex");
export const sha256Base64Url = (bytes: Uint8Array) => crypto.createHash("sha256").update(bytes).digest("base64url");

/**
 * A screen using the assets: the logo (Metro picks up its scale variants), an alias import of the
 * font, a package's asset and a JSON import (a module, not an asset).
 */
const BRAND_SCREEN = [
  'import { Image, Text } from "react-native";',
  'import font from "@/assets/fonts/Brand.ttf";',
  'import data from "../constants/brand.json";',
  'const icon = require("expo-router/assets/file.png");',
  'const logo = require("../assets/images/logo.png");',
  "",
  "export default function Brand() {",
  "  return <><Image source={logo} /><Image source={icon} /><Text>{String(font) + data.tagline}</Text></>;",
  "}",
  "",
].join("\n");

/** The files {@link FIXTURE_ASSETS} adds to the template app, by path relative to the app. */
export const FIXTURE_FILES: Record<string, Uint8Array | string> = {
  ...FIXTURE_ASSETS,
  "app/brand.tsx": BRAND_SCREEN,
  "constants/brand.json": '{ "tagline": "Made with care" }\n',
};

/** Adds the binary assets and a screen that references them, and commits; returns HEAD. */
export async function addBinaryAssets(sandbox: Sandbox): Promise<string> {
  await sandbox.files.write(Object.entries(FIXTURE_FILES).map(([path, data]) => ({ path: `${APP_DIR}/${path}`, data })));
  const { stdout } = await sandbox.commands.run('git add -A && git commit -q -m "Add brand assets" && git rev-parse HEAD', { cwd: APP_DIR });
  return stdout.trim();
}

/** Every pathname under a prefix, across pages. */
export async function listPathnames(blob: BlobStore, prefix: string): Promise<string[]> {
  return (await listAllBlobs(blob, prefix)).map((entry) => entry.pathname);
}

/** Fetches a public blob URL through the app's `/blob/...` route, as a client would. */
export async function fetchBlobUrl(url: string): Promise<{ status: number; contentType: string | null; bytes: Uint8Array }> {
  const pathname = new URL(url).pathname.replace(/^\/blob\//, "").split("/").map(decodeURIComponent);
  const response = await serveBlobRoute(new Request(url), { params: Promise.resolve({ pathname }) });
  return { status: response.status, contentType: response.headers.get("content-type"), bytes: new Uint8Array(await response.arrayBuffer()) };
}
