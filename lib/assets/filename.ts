import { InvalidFilenameError } from "./errors";

/**
 * Longest filename kept, in UTF-8 bytes: well under the 255-byte name limit of Linux file
 * systems, with room for the `<timestamp>-` prefix and random suffix of chat images.
 */
export const MAX_FILENAME_BYTES = 200;
/** An extension longer than this is not kept whole when a name is shortened. */
const MAX_EXTENSION_LENGTH = 16;

// Controls (C0, DEL, C1), format characters (bidi overrides, zero-width joiners), lone
// surrogates, noncharacters and line/paragraph separators: invisible or unsafe in names.
const REMOVED = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]/gu;
// Printable characters Windows, shells or URLs treat specially; replaced, not removed.
const REPLACED = /[<>:"|?*]/g;
// Leading dots would hide the file (and `..` names a parent); trailing dots and spaces vanish on
// some file systems.
const LEADING = /^[\s.]+/u;
const TRAILING = /[\s.]+$/u;

/**
 * A filename safe to use as one path segment in the blob store and the sandbox: the last
 * segment of what the client sent (both `/` and `\` separate), Unicode NFC, without control,
 * invisible or reserved characters, whitespace collapsed to single spaces, no leading dots, at
 * most {@link MAX_FILENAME_BYTES} bytes (the extension is kept when shortening). Throws
 * {@link InvalidFilenameError} when nothing remains.
 */
export function sanitizeFilename(raw: string): string {
  const normalized = raw.normalize("NFC");
  const lastSegment = normalized.slice(Math.max(normalized.lastIndexOf("/"), normalized.lastIndexOf("\\")) + 1);
  const cleaned = lastSegment
    .replace(REMOVED, "")
    .replace(REPLACED, "_")
    .replace(/\s+/gu, " ")
    .replace(LEADING, "")
    .replace(TRAILING, "");
  const name = shorten(cleaned);
  if (name === "") throw new InvalidFilenameError();
  return name;
}

/** The lower-case extension after the last dot, or "" when the name has none. */
export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf(".");
  return dot > 0 ? filename.slice(dot + 1).toLowerCase() : "";
}

/** Cuts the base name, whole code points at a time, until the name fits the byte limit. */
function shorten(name: string): string {
  if (Buffer.byteLength(name) <= MAX_FILENAME_BYTES) return name;
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 && name.length - dot <= MAX_EXTENSION_LENGTH + 1 ? name.slice(dot) : "";
  const budget = MAX_FILENAME_BYTES - Buffer.byteLength(extension);
  let base = "";
  for (const codePoint of extension ? name.slice(0, dot) : name) {
    if (Buffer.byteLength(base + codePoint) > budget) break;
    base += codePoint;
  }
  return base.replace(TRAILING, "") + extension;
}

/** True for names an upload can have produced: sanitising leaves them unchanged. */
export function isStoredFilename(filename: string): boolean {
  try {
    return sanitizeFilename(filename) === filename;
  } catch {
    return false;
  }
}
