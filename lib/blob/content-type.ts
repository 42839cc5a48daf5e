import { BlobOptionsError } from "./errors";

/** Extension → MIME type for what the product stores (spec 2.9, 8) plus common web types. */
const MIME_BY_EXTENSION: Record<string, string> = {
  // bundles and data
  js: "application/javascript",
  mjs: "application/javascript",
  cjs: "application/javascript",
  json: "application/json",
  map: "application/json",
  hbc: "application/octet-stream",
  wasm: "application/wasm",
  txt: "text/plain",
  csv: "text/csv",
  md: "text/markdown",
  css: "text/css",
  html: "text/html",
  htm: "text/html",
  xml: "application/xml",
  pdf: "application/pdf",
  zip: "application/zip",
  // images
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  svg: "image/svg+xml",
  ico: "image/x-icon",
  bmp: "image/bmp",
  // fonts
  ttf: "font/ttf",
  otf: "font/otf",
  woff: "font/woff",
  woff2: "font/woff2",
  // audio and video
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  m4a: "audio/mp4",
  mp4: "video/mp4",
  webm: "video/webm",
  mov: "video/quicktime",
};

export const DEFAULT_CONTENT_TYPE = "application/octet-stream";

/** The MIME type for a pathname's extension (case-insensitive); octet-stream when unknown. */
export function contentTypeForPathname(pathname: string): string {
  const name = pathname.slice(pathname.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return DEFAULT_CONTENT_TYPE;
  return MIME_BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? DEFAULT_CONTENT_TYPE;
}

// type/subtype with optional parameters; no CR/LF or other controls (it becomes a header).
const CONTENT_TYPE_SHAPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[\x20-\x7e]*)?$/;

/** Returns a caller-supplied content type when it is a well-formed header value. */
export function validateContentType(contentType: string): string {
  if (contentType.length > 255 || !CONTENT_TYPE_SHAPE.test(contentType)) {
    throw new BlobOptionsError(`"${contentType.slice(0, 80)}" is not a valid content type.`);
  }
  return contentType;
}

const essence = (contentType: string) => contentType.split(";")[0].trim().toLowerCase();

/**
 * Vercel Blob's rule: images, audio, video, plain text, XML, JSON and PDF display inline;
 * everything else (HTML above all) downloads as an attachment.
 */
export function dispositionTypeFor(contentType: string): "inline" | "attachment" {
  const type = essence(contentType);
  if (/^(image|audio|video)\//.test(type)) return "inline";
  return ["text/plain", "text/xml", "application/json", "application/pdf"].includes(type) ? "inline" : "attachment";
}

/**
 * A Content-Disposition header (RFC 6266): an ASCII `filename` fallback without quotes or
 * controls, plus `filename*` in UTF-8 when the name needs it.
 */
export function contentDisposition(type: "inline" | "attachment", fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  if (fallback === fileName) return `${type}; filename="${fileName}"`;
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Types a browser may execute when opened directly: these get a sandboxing CSP when we serve them. */
export function isScriptCapable(contentType: string): boolean {
  const type = essence(contentType);
  return (
    type === "image/svg+xml" ||
    type === "text/html" ||
    type === "application/xhtml+xml" ||
    type === "text/xml" ||
    type === "application/xml" ||
    type.endsWith("+xml") ||
    type.includes("javascript") ||
    type.includes("ecmascript")
  );
}
