import { detectSignature } from "./content";
import { MissingUploadFieldError, UnsupportedFileTypeError, UploadError } from "./errors";
import { type AssetKind, allowedFileType, extensionForSignature, listAllowedExtensions } from "./file-types";
import { extensionOf, sanitizeFilename } from "./filename";
import type { ReceivedFile } from "./multipart";

/** Which files an endpoint takes. */
export interface AcceptPolicy {
  /** Allowed families of spec 8. */
  kinds: readonly AssetKind[];
  /**
   * When the filename has no extension, take it from the content instead of refusing the file
   * (a pasted clipboard image arrives as `blob` or `image`).
   * @defaultValue false
   */
  inferMissingExtension?: boolean;
}

/** A received file that passed every check, ready to be stored. */
export interface AcceptedFile {
  /** Host path of the spooled bytes. */
  path: string;
  /** Sanitised, with an allowed extension that matches the content. */
  filename: string;
  contentType: string;
  size: number;
  /** SHA-256 of the bytes (hex). */
  sha256: string;
}

/**
 * Checks a received file against a policy: present and non-empty, a filename that survives
 * sanitising (400), an allowed extension (415) and content whose magic bytes, or SVG root
 * element, match that extension (415). The content type is the one of the verified format, never
 * the client's declaration.
 */
export async function acceptFile(file: ReceivedFile | undefined, policy: AcceptPolicy): Promise<AcceptedFile> {
  if (!file) throw new MissingUploadFieldError("The form has no file part named \"file\".");
  let filename = sanitizeFilename(file.filename);
  if (file.size === 0) throw new UploadError(400, "empty_file", "The file is empty.");

  const signature = await detectSignature(file.path);
  let extension = extensionOf(filename);
  if (extension === "" && policy.inferMissingExtension && signature) {
    const inferred = extensionForSignature(signature, policy.kinds);
    if (inferred) {
      extension = inferred;
      filename = sanitizeFilename(`${filename}.${inferred}`);
    }
  }

  const rule = allowedFileType(extension, policy.kinds);
  if (!rule) {
    throw new UnsupportedFileTypeError(
      `${extension ? `.${extension} files are` : "Files without an extension are"} not allowed; allowed: ${listAllowedExtensions(policy.kinds)}.`,
    );
  }
  if (!signature || !rule.signatures.includes(signature)) {
    throw new UnsupportedFileTypeError(
      `The content of ${JSON.stringify(filename)} is not a .${extension} file${signature ? ` (it looks like ${signature})` : ""}.`,
    );
  }
  return { path: file.path, filename, contentType: rule.contentType, size: file.size, sha256: file.sha256 };
}
