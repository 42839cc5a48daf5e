import type { BlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import { createBrowserPool, type BrowserPool } from "./browser";
import { capturePreview } from "./capture";

export { BrowserUnavailableError, ScreenshotTimeoutError, PreviewUnreachableError } from "./errors";

/** Spec 2.9 paths of a project's screenshots. */
export const screenshotPathname = (projectId: string, kind: "mobile" | "desktop") => `screenshots/${projectId}-${kind}.png`;

/** The process's one warm browser pool for the configured CHROMIUM_PATH (a new pool when the configuration changed). */
export function getBrowserPool(): BrowserPool {
  const executablePath = getConfig().CHROMIUM_PATH;
  const current = processSingleton("browserPool", () => ({ executablePath, pool: createBrowserPool(executablePath) }), {
    close: ({ pool }) => pool.close(),
  });
  if (current.executablePath === executablePath) return current.pool;
  void resetProcessSingleton("browserPool");
  return getBrowserPool();
}

/**
 * Spec 4.3: captures the preview at the mobile and desktop viewports and stores both PNGs
 * (public, `image/png`, replacing the previous ones). Returns their URLs.
 */
export async function takeProjectScreenshots(
  projectId: string,
  previewUrl: string,
  deps: { blob: BlobStore; pool?: BrowserPool; timeoutMs?: number },
): Promise<{ mobileUrl: string; desktopUrl: string }> {
  const pool = deps.pool ?? getBrowserPool();
  const shots = await capturePreview(await pool.get(), previewUrl, deps.timeoutMs ?? getConfig().SCREENSHOT_TIMEOUT_MS);
  const store = (kind: "mobile" | "desktop") =>
    deps.blob.put(screenshotPathname(projectId, kind), shots[kind], {
      access: "public",
      contentType: "image/png",
      allowOverwrite: true,
    });
  const [mobile, desktop] = await Promise.all([store("mobile"), store("desktop")]);
  return { mobileUrl: mobile.url, desktopUrl: desktop.url };
}
