import type { Browser, Viewport } from "puppeteer-core";
import { PreviewUnreachableError, ScreenshotTimeoutError } from "./errors";

/** Spec 4.3: mobile 375×667 at device scale factor 2, desktop 1920×1080. */
export const VIEWPORTS = {
  mobile: { width: 375, height: 667, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
  desktop: { width: 1920, height: 1080, deviceScaleFactor: 1 },
} satisfies Record<string, Viewport>;

export type ScreenshotKind = keyof typeof VIEWPORTS;

const UNREACHABLE = /net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|NAME_NOT_RESOLVED|ADDRESS_UNREACHABLE|CONNECTION_CLOSED|EMPTY_RESPONSE|INVALID_URL)/;

/**
 * Captures the preview at both viewports in parallel, in a fresh browser context (no shared
 * cookies or storage between jobs). Waits for the `load` event only: dev servers keep
 * sockets open, so "network idle" may never come.
 */
export async function capturePreview(
  browser: Browser,
  url: string,
  timeoutMs: number,
): Promise<Record<ScreenshotKind, Uint8Array>> {
  const context = await browser.createBrowserContext();
  try {
    const shoot = async (kind: ScreenshotKind) => {
      const page = await context.newPage();
      await page.setViewport(VIEWPORTS[kind]);
      try {
        await page.goto(url, { waitUntil: "load", timeout: timeoutMs });
      } catch (error) {
        const message = (error as Error).message;
        if ((error as Error).name === "TimeoutError") throw new ScreenshotTimeoutError(timeoutMs);
        const unreachable = message.match(UNREACHABLE);
        if (unreachable) throw new PreviewUnreachableError(unreachable[0]);
        throw error;
      }
      return page.screenshot({ type: "png" });
    };
    const [mobile, desktop] = await Promise.all([shoot("mobile"), shoot("desktop")]);
    return { mobile, desktop };
  } finally {
    await context.close().catch(() => undefined);
  }
}
