import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
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

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The app's binary assets: a logo at three scales and a font. */
export const FIXTURE_ASSETS = {
  "assets/images/logo.png": binaryBytes(3000, 1, PNG_SIGNATURE),
  "assets/images/logo@2x.png": binaryBytes(5000, 2, PNG_SIGNATURE),
  "assets/images/logo@3x.png": binaryBytes(7000, 3, PNG_SIGNATURE),
  "assets/fonts/Brand.ttf": binaryBytes(4000, 4, [0x00, 0x01, 0x00, 0x00]),
};

export const md5 = (bytes: Uint8Array) => crypto.createHash("md5").update(bytes).digest("hex");
export const sha256Base64Url = (bytes: Uint8Array) => crypto.createHash("sha256").update(bytes).digest("base64url");

/**
 * A screen using the assets: two references to the logo (one to a scale variant), an alias
 * import of the font, a package asset (not exported offline) and a non-asset import.
 */
const BRAND_SCREEN = [
  'import { Image, Text } from "react-native";',
  'import font from "@/assets/fonts/Brand.ttf";',
  'import data from "./data.json";',
  'const icon = require("expo-router/assets/icon.png");',
  'const logos = [require("../assets/images/logo.png"), require("../assets/images/logo@2x.png")];',
  "",
  "export default function Brand() {",
  "  return <><Image source={logos[0]} /><Text>{String(font) + String(data) + String(icon)}</Text></>;",
  "}",
  "",
].join("\n");

/** The files {@link FIXTURE_ASSETS} adds to the template app, by path relative to the app. */
export const FIXTURE_FILES: Record<string, Uint8Array | string> = { ...FIXTURE_ASSETS, "app/brand.tsx": BRAND_SCREEN };

/** Adds the binary assets and a screen that references them, and commits; returns HEAD. */
export async function addBinaryAssets(sandbox: Sandbox): Promise<string> {
  await sandbox.files.write(Object.entries(FIXTURE_FILES).map(([path, data]) => ({ path: `${APP_DIR}/${path}`, data })));
  const { stdout } = await sandbox.commands.run('git add -A && git commit -q -m "Add brand assets" && git rev-parse HEAD', { cwd: APP_DIR });
  return stdout.trim();
}

/** A copy of `templates/app` with {@link FIXTURE_FILES}, in a fresh temp directory. */
export async function createHostApp(): Promise<string> {
  const app = await fs.mkdtemp(path.join(os.tmpdir(), "export-ios-"));
  await fs.cp(path.join(process.cwd(), "templates", "app"), app, { recursive: true });
  for (const [file, data] of Object.entries(FIXTURE_FILES)) {
    await fs.mkdir(path.dirname(path.join(app, file)), { recursive: true });
    await fs.writeFile(path.join(app, file), data);
  }
  return app;
}

/** Runs the template's offline export in `app` with nothing but PATH: no Expo, no network. */
export async function runExportScript(app: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH, NODE_ENV: "test" as const };
  return promisify(execFile)(process.execPath, ["scripts/export-ios.mjs", ...args], { cwd: app, env }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
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
