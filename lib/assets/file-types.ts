/** The families of files spec 8 allows as project assets. */
export type AssetKind = "image" | "font" | "audio" | "video";

/** What one allowed extension must contain and how it is served. */
export interface AllowedFileType {
  kind: AssetKind;
  /** The MIME type stored with the blob and written to the manifest. */
  contentType: string;
  /**
   * Signatures the content may carry: `file-type` extensions (its detection by magic bytes), or
   * `svg` for XML text whose root element is `<svg>`.
   */
  signatures: readonly string[];
}

/**
 * Spec 8, exactly: image, font, audio and video extensions. Keys are lower case; where two
 * extensions share a signature (jpg, jpeg) the first one listed is the canonical one.
 */
export const ALLOWED_FILE_TYPES: Readonly<Record<string, AllowedFileType>> = {
  jpg: { kind: "image", contentType: "image/jpeg", signatures: ["jpg"] },
  jpeg: { kind: "image", contentType: "image/jpeg", signatures: ["jpg"] },
  png: { kind: "image", contentType: "image/png", signatures: ["png", "apng"] },
  gif: { kind: "image", contentType: "image/gif", signatures: ["gif"] },
  webp: { kind: "image", contentType: "image/webp", signatures: ["webp"] },
  svg: { kind: "image", contentType: "image/svg+xml", signatures: ["svg"] },
  ico: { kind: "image", contentType: "image/x-icon", signatures: ["ico"] },
  ttf: { kind: "font", contentType: "font/ttf", signatures: ["ttf"] },
  otf: { kind: "font", contentType: "font/otf", signatures: ["otf"] },
  woff: { kind: "font", contentType: "font/woff", signatures: ["woff"] },
  woff2: { kind: "font", contentType: "font/woff2", signatures: ["woff2"] },
  mp3: { kind: "audio", contentType: "audio/mpeg", signatures: ["mp3"] },
  wav: { kind: "audio", contentType: "audio/wav", signatures: ["wav"] },
  // MPEG-4 files carry a brand that `file-type` reports as mp4, m4v or m4a; all are .mp4 content.
  mp4: { kind: "video", contentType: "video/mp4", signatures: ["mp4", "m4v", "m4a"] },
  webm: { kind: "video", contentType: "video/webm", signatures: ["webm"] },
};

/** The rule for an extension (case-insensitive) when `kinds` allows it; otherwise undefined. */
export function allowedFileType(extension: string, kinds: readonly AssetKind[]): AllowedFileType | undefined {
  const key = extension.toLowerCase();
  const rule = Object.hasOwn(ALLOWED_FILE_TYPES, key) ? ALLOWED_FILE_TYPES[key] : undefined;
  return rule && kinds.includes(rule.kind) ? rule : undefined;
}

/** The canonical extension for a detected signature among the allowed kinds, if any. */
export function extensionForSignature(signature: string, kinds: readonly AssetKind[]): string | undefined {
  return Object.keys(ALLOWED_FILE_TYPES).find((extension) => {
    const rule = ALLOWED_FILE_TYPES[extension];
    return kinds.includes(rule.kind) && rule.signatures.includes(signature);
  });
}

/** The allowed extensions of some kinds, for error messages. */
export function listAllowedExtensions(kinds: readonly AssetKind[]): string {
  return Object.keys(ALLOWED_FILE_TYPES)
    .filter((extension) => kinds.includes(ALLOWED_FILE_TYPES[extension].kind))
    .join(", ");
}
