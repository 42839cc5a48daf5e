import { AppError } from "@/lib/errors";

/** Thrown when the preview did not finish loading within the screenshot timeout. */
export class ScreenshotTimeoutError extends AppError {
  constructor(timeoutMs: number) {
    super(504, "screenshot_timeout", `The preview did not finish loading within ${timeoutMs} ms.`);
  }
}

/** Thrown when the preview URL cannot be reached at all (refused, DNS, reset). */
export class PreviewUnreachableError extends AppError {
  constructor(detail: string) {
    super(502, "preview_unreachable", `The project preview could not be reached (${detail}). Is its dev server running?`);
  }
}

/** Thrown when no Chromium can be launched: CHROMIUM_PATH names no executable, or the launch failed. */
export class BrowserUnavailableError extends AppError {
  constructor(executablePath: string, detail: string, options?: { cause?: unknown }) {
    super(
      503,
      "browser_unavailable",
      `Screenshots need Chromium, which could not be started from ${executablePath} (${detail}). ` +
        "Install it (e.g. `apt-get install chromium`) or set CHROMIUM_PATH to a Chromium or Chrome executable, then retry.",
      options,
    );
  }
}
