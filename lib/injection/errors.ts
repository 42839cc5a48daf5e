import { AppError } from "@/lib/errors";

/** Why a layout could not be injected; stable snake_case values for callers and the HTTP body. */
export type InjectionErrorCode =
  | "layout_unsupported_file"
  | "layout_parse_error"
  | "layout_no_default_export"
  | "layout_unsupported_export"
  | "layout_unsafe_jsx"
  | "layout_name_collision";

/**
 * Thrown when the backend wrapper cannot be injected safely (HTTP 422). Nothing is written when
 * this is thrown; the message names the file (and line when known) and what to change by hand.
 */
export class InjectionError extends AppError {
  declare readonly code: InjectionErrorCode;

  constructor(code: InjectionErrorCode, message: string, options?: { cause?: unknown }) {
    super(422, code, message, options);
  }
}

/**
 * Thrown when the layout has its own Convex provider whose client the injector cannot point at
 * `EXPO_PUBLIC_CONVEX_URL` (HTTP 409). A second client would be wrong either way, so enable stops
 * before anything is provisioned or written; the message says what to change by hand.
 */
export class ExistingProviderError extends AppError {
  constructor(message: string) {
    super(409, "layout_has_convex_provider", message);
  }
}

/** The layout being edited, for messages. */
export interface SourceFile {
  filename: string;
  source: string;
}

/** `file:line` of a node for messages (1-based, as editors show it); recast drops `loc` on some nodes, offsets remain. */
export function where(file: SourceFile, node: { start?: number | null }): string {
  if (node.start == null) return file.filename;
  return `${file.filename}:${file.source.slice(0, node.start).split("\n").length}`;
}
