// Offline stand-in for `npx expo export --platform ios --output-dir dist --dump-assetmap`, for
// sandboxes where Expo is not installed. Dependency-free; writes the same dist/ layout:
//   dist/_expo/static/js/ios/<entry>-<md5>.hbc   the bundle (binary)
//   dist/assets/<md5>                             one file per asset scale, no extension
//   dist/metadata.json                            { version: 0, bundler: "metro", fileMetadata: { ios } }
//   dist/assetmap.json                            asset hash -> asset (only with --dump-assetmap)
// The bundle is not Hermes bytecode: it is the app's sources behind a binary header, so whatever
// consumes the export must treat it as bytes, exactly as it must with a real Hermes bundle.
// Assets are the files the sources reference with require()/import, with their @2x/@3x variants,
// grouped and hashed the way Metro does it.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";

const { values: options } = parseArgs({
  options: {
    platform: { type: "string", short: "p", default: "ios" },
    "output-dir": { type: "string", default: "dist" },
    "dump-assetmap": { type: "boolean", default: false },
  },
  strict: true,
});
if (options.platform !== "ios") fail(`This offline export only builds the ios platform, not "${options.platform}".`);

const root = process.cwd();
const outDir = path.resolve(root, options["output-dir"]);
const SOURCE_EXTENSIONS = new Set([".ts", ".tsx", ".js", ".jsx"]);
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".expo", "ios", "android", "backend", "web-build"]);
const ASSET_EXTENSIONS = new Set(["png", "jpg", "jpeg", "gif", "webp", "bmp", "svg", "ico", "ttf", "otf", "woff", "woff2", "mp3", "wav", "m4a", "aac", "mp4", "webm", "mov"]);
// Like PNG's signature: 0x89 and CR LF do not survive a text decode or a line-ending conversion.
const BUNDLE_MAGIC = Buffer.from([0x89, ...Buffer.from("OFFLINE-HBC"), 0x0d, 0x0a, 0x1a, 0x0a]);

function fail(message) {
  console.error(`Error: ${message}`);
  process.exit(1);
}

const md5 = (bytes) => createHash("md5").update(bytes).digest("hex");
const toPosix = (file) => path.relative(root, file).split(path.sep).join("/");
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

async function sourceFiles(dir) {
  const files = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && full !== outDir) files.push(...(await sourceFiles(full)));
    } else if (entry.isFile() && SOURCE_EXTENSIONS.has(path.extname(entry.name))) {
      files.push(full);
    }
  }
  return files.sort();
}

/** Module specifiers of require(), import and export-from that name an asset file. */
function assetSpecifiers(source) {
  const pattern = /(?:\brequire\s*\(\s*|\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'\n]+)\1/g;
  return [...source.matchAll(pattern)].map((match) => match[2]).filter((specifier) => ASSET_EXTENSIONS.has(path.extname(specifier).slice(1).toLowerCase()));
}

function resolveSpecifier(fromFile, specifier) {
  if (specifier.startsWith("./") || specifier.startsWith("../")) return path.resolve(path.dirname(fromFile), specifier);
  if (specifier.startsWith("@/")) return path.resolve(root, specifier.slice(2));
  return null; // package assets live in node_modules, which this export does not read
}

/** `dir/name.type` without a scale suffix: `logo@2x.png` and `logo.png` are one asset. */
function assetIdentity(requested) {
  const type = path.extname(requested).slice(1);
  const name = path.basename(requested, `.${type}`).replace(/@\d+(?:\.\d+)?x$/, "");
  return { dir: path.dirname(requested), name, type, id: path.join(path.dirname(requested), `${name}.${type}`) };
}

/** One asset as Metro sees it: every scale variant of `dir/name.type`, hashed like Metro does. */
async function loadAsset({ dir, name, type, id }, referencedFrom) {
  const variant = new RegExp(`^${escapeRegExp(name)}(?:@(\\d+(?:\\.\\d+)?)x)?\\.${escapeRegExp(type)}$`);
  const names = await readdir(dir).catch(() => []);
  const scaled = names
    .map((file) => ({ file, match: variant.exec(file) }))
    .filter(({ match }) => match)
    .map(({ file, match }) => ({ file: path.join(dir, file), scale: Number(match[1] ?? 1) }))
    .sort((a, b) => a.scale - b.scale);
  if (scaled.length === 0) fail(`Unable to resolve asset "${toPosix(id)}" referenced from ${toPosix(referencedFrom)}.`);
  const contents = await Promise.all(scaled.map(({ file }) => readFile(file)));
  const relativeDir = toPosix(dir);
  return {
    contents,
    entry: {
      __packager_asset: true,
      fileSystemLocation: dir,
      httpServerLocation: relativeDir ? `/assets/${relativeDir}` : "/assets",
      scales: scaled.map(({ scale }) => scale),
      files: scaled.map(({ file }) => file),
      hash: md5(Buffer.concat(contents)),
      name,
      type,
      fileHashes: contents.map(md5),
    },
  };
}

const files = await sourceFiles(root);
const modules = {};
const assets = new Map();
for (const file of files) {
  const source = await readFile(file, "utf8");
  modules[toPosix(file)] = source;
  for (const specifier of assetSpecifiers(source)) {
    const resolved = resolveSpecifier(file, specifier);
    const asset = resolved && assetIdentity(resolved);
    if (asset && !assets.has(asset.id)) assets.set(asset.id, await loadAsset(asset, file));
  }
}

const packageJson = JSON.parse(await readFile(path.join(root, "package.json"), "utf8").catch(() => "{}"));
const entryName = path.basename(packageJson.main ?? "index").replace(/\.[^.]+$/, "");
// What Metro registers in the bundle: the asset without build-machine paths; updates find the
// files by fileHashes.
const assetRecords = [...assets.values()].map(({ entry }) => {
  const { files: _files, fileSystemLocation: _location, ...record } = entry;
  return record;
});
const script = [
  "// Offline stand-in bundle: the app's sources, not compiled.",
  `var __assets = ${JSON.stringify(assetRecords)};`,
  `var __modules = ${JSON.stringify(modules)};`,
  "",
].join("\n");
const payload = Buffer.from(script, "utf8");
const length = Buffer.alloc(4);
length.writeUInt32LE(payload.length);
const bundle = Buffer.concat([BUNDLE_MAGIC, length, payload]);
const bundlePath = `_expo/static/js/ios/${entryName}-${md5(bundle)}.hbc`;

await rm(outDir, { recursive: true, force: true });
await mkdir(path.join(outDir, path.dirname(bundlePath)), { recursive: true });
await mkdir(path.join(outDir, "assets"), { recursive: true });
await writeFile(path.join(outDir, bundlePath), bundle);

const metadataAssets = [];
for (const { contents, entry } of assets.values()) {
  for (const [index, fileHash] of entry.fileHashes.entries()) {
    await writeFile(path.join(outDir, "assets", fileHash), contents[index]);
    metadataAssets.push({ path: `assets/${fileHash}`, ext: entry.type });
  }
}
const metadata = { version: 0, bundler: "metro", fileMetadata: { ios: { bundle: bundlePath, assets: metadataAssets } } };
await writeFile(path.join(outDir, "metadata.json"), JSON.stringify(metadata));
if (options["dump-assetmap"]) {
  const assetMap = Object.fromEntries([...assets.values()].map(({ entry }) => [entry.hash, entry]));
  await writeFile(path.join(outDir, "assetmap.json"), JSON.stringify(assetMap));
}
console.log(`iOS bundle: ${bundlePath} (${bundle.length} bytes, ${files.length} modules, ${metadataAssets.length} asset files)`);
console.log(`Exported: ${toPosix(outDir) || "."}`);
