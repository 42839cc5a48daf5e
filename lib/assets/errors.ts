import { AppError } from "@/lib/errors";

/**
 * Base of every refused upload or asset operation. Extends AppError, so a route that lets one
 * escape answers `{ error: { code, message } }` with the matching status.
 */
export class UploadError extends AppError {}

/** Thrown when the body is not a readable multipart form, or a part breaks the form's limits. */
export class MalformedUploadError extends UploadError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(400, "invalid_multipart", message, options);
  }
}

/** Thrown when a required form field or the file part is missing, empty or repeated. */
export class MissingUploadFieldError extends UploadError {
  constructor(message: string) {
    super(400, "missing_field", message);
  }
}

/** Thrown as soon as a file grows past the size limit, while the body is still arriving. */
export class UploadTooLargeError extends UploadError {
  constructor(readonly maxBytes: number) {
    super(413, "file_too_large", `The file is larger than the limit of ${formatBytes(maxBytes)}.`);
  }
}

/** Thrown when the extension is not allowed, or the bytes are not what the extension says. */
export class UnsupportedFileTypeError extends UploadError {
  constructor(message: string) {
    super(415, "unsupported_file_type", message);
  }
}

/** Thrown when nothing safe remains of a filename after sanitising. */
export class InvalidFilenameError extends UploadError {
  constructor(message = "The filename has no usable characters left after removing unsafe ones.") {
    super(400, "invalid_filename", message);
  }
}

/** Thrown when the project's asset manifest has no entry of that name. */
export class AssetNotFoundError extends UploadError {
  constructor(filename: string) {
    super(404, "asset_not_found", `The project has no asset named ${JSON.stringify(filename)}.`);
  }
}

function formatBytes(bytes: number): string {
  const mebibytes = bytes / (1024 * 1024);
  return Number.isInteger(mebibytes) ? `${mebibytes} MB` : `${bytes} bytes`;
}
