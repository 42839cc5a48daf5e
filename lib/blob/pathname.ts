import crypto from "node:crypto";
import { BlobPathnameError } from "./errors";

/** Vercel Blob's limit, in UTF-16 code units like the SDK counts. */
export const MAX_PATHNAME_LENGTH = 950;
/** S3's key limit; counted in UTF-8 bytes. */
export const MAX_PATHNAME_BYTES = 1024;

// Control characters break headers and logs; backslashes become separators on Windows;
// U+10FFFF is excluded so `prefix + U+10FFFF` is a strict upper bound for prefix ranges.
const FORBIDDEN_CHARACTERS = /[\u0000-\u001f\u007f\\]|\u{10FFFF}/u;
// A lone surrogate cannot be encoded as UTF-8 (stores would mangle it).
const LONE_SURROGATE = /\p{Cs}/u;

function checkCharacters(value: string, what: string): void {
  if (FORBIDDEN_CHARACTERS.test(value) || LONE_SURROGATE.test(value)) {
    throw new BlobPathnameError(`The ${what} contains a control character, a backslash or invalid Unicode.`);
  }
  if (value.length > MAX_PATHNAME_LENGTH || Buffer.byteLength(value) > MAX_PATHNAME_BYTES) {
    throw new BlobPathnameError(
      `The ${what} is too long: at most ${MAX_PATHNAME_LENGTH} characters and ${MAX_PATHNAME_BYTES} UTF-8 bytes.`,
    );
  }
}

/**
 * Returns `pathname` when every store can hold it: non-empty, relative (no leading `/`), no
 * empty, `.` or `..` segments, no trailing `/`, no control characters or backslashes, within the
 * length limits. Throws `BlobPathnameError` otherwise.
 */
export function validatePathname(pathname: unknown): string {
  if (typeof pathname !== "string" || pathname === "") {
    throw new BlobPathnameError("A blob pathname is required.");
  }
  checkCharacters(pathname, "blob pathname");
  for (const segment of pathname.split("/")) {
    if (segment === "") {
      throw new BlobPathnameError(
        `The blob pathname "${pathname}" has an empty segment (leading, trailing or double "/").`,
      );
    }
    if (segment === "." || segment === "..") {
      throw new BlobPathnameError(`The blob pathname "${pathname}" has a "${segment}" segment.`);
    }
  }
  return pathname;
}

/** Returns a list prefix after the same character checks as pathnames; may end with `/`. */
export function validatePrefix(prefix: unknown): string {
  if (typeof prefix !== "string") throw new BlobPathnameError("A list prefix must be a string.");
  checkCharacters(prefix, "list prefix");
  return prefix;
}

const SUFFIX_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const RANDOM_SUFFIX_LENGTH = 30;

/** 30 uniformly random alphanumerics, the shape of Vercel Blob's suffixes. */
function randomSuffix(): string {
  let suffix = "";
  for (let i = 0; i < RANDOM_SUFFIX_LENGTH; i++) suffix += SUFFIX_ALPHABET[crypto.randomInt(SUFFIX_ALPHABET.length)];
  return suffix;
}

/**
 * Inserts `-<random>` before the last extension of the last segment: `a/photo.png` →
 * `a/photo-<random>.png`; `notes` → `notes-<random>`; `.env` → `.env-<random>`.
 */
export function withRandomSuffix(pathname: string): string {
  const slash = pathname.lastIndexOf("/");
  const dot = pathname.lastIndexOf(".");
  // A dot that starts the last segment (".env") marks a hidden file, not an extension.
  if (dot <= slash + 1) return `${pathname}-${randomSuffix()}`;
  return `${pathname.slice(0, dot)}-${randomSuffix()}${pathname.slice(dot)}`;
}

/** The last segment of a pathname: the file name used in Content-Disposition. */
export function fileNameOf(pathname: string): string {
  return pathname.slice(pathname.lastIndexOf("/") + 1);
}

/**
 * Maps pathnames to public URLs under `baseUrl` and back. Each segment is percent-encoded, so
 * `#`, `?`, spaces and non-ASCII survive the round trip.
 */
export function createBlobUrls(baseUrl: string) {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    urlFor(pathname: string): string {
      return `${base}/${pathname.split("/").map(encodeURIComponent).join("/")}`;
    },
    downloadUrlFor(pathname: string): string {
      return `${this.urlFor(pathname)}?download=1`;
    },
    /** A validated pathname from a URL under `baseUrl` or from a pathname; other URLs are refused. */
    pathnameOf(urlOrPathname: string): string {
      if (typeof urlOrPathname === "string" && urlOrPathname.startsWith(`${base}/`)) {
        const encoded = urlOrPathname.slice(base.length + 1).replace(/[?#].*$/s, "");
        try {
          return validatePathname(encoded.split("/").map(decodeURIComponent).join("/"));
        } catch (error) {
          if (error instanceof URIError) throw new BlobPathnameError("The blob URL is not correctly percent-encoded.");
          throw error;
        }
      }
      if (typeof urlOrPathname === "string" && /^https?:\/\//i.test(urlOrPathname)) {
        throw new BlobPathnameError("The URL does not belong to this blob store.");
      }
      return validatePathname(urlOrPathname);
    },
  };
}

export type BlobUrls = ReturnType<typeof createBlobUrls>;
