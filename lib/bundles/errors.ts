import { AppError } from "@/lib/errors";

/** The step of a static bundle build that failed; the error code is `bundle_<stage>_failed`. */
export type BundleBuildStage = "sandbox" | "export" | "output" | "config" | "upload" | "publish";

/**
 * A static bundle build failed at `stage`. The message is meant for the user (it quotes the
 * export command's redacted output) and never holds a secret. A failed export is 422: the app's
 * code does not build. Any other stage is 502: the sandbox or the blob store is an upstream.
 */
export class BundleBuildError extends AppError {
  constructor(
    readonly stage: BundleBuildStage,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(stage === "export" ? 422 : 502, `bundle_${stage}_failed`, message, options);
  }
}
