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
 * True once the page shows content: text or media. React Native Web renders into `#root` after
 * the bundle ran (after `load`), first as empty layout boxes. Evaluated in the page.
 */
const HAS_RENDERED = () => {
  const root = document.getElementById("root") ?? document.body;
  return (root.textContent ?? "").trim().length > 0 || root.querySelector("img, svg, canvas, video") !== null;
};

/**
 * Captures the preview at both viewports in parallel, in a fresh browser context (no shared
 * cookies or storage between jobs). Waits for the `load` event, then for the app to render
 * (an app that renders nothing is shot when the time is up); the screenshot paints a fresh frame.
 * Both pages of a job are open at once, so only one is in front: nothing here may wait on
 * animation frames, which background pages do not get. Never waits for "network idle": dev
 * servers keep sockets open, so it may never come.
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
      const deadline = Date.now() + timeoutMs;
      try {
        await page.goto(url, { waitUntil: "load", timeout: timeoutMs });
        await page.waitForFunction(HAS_RENDERED, { timeout: Math.max(1, deadline - Date.now()), polling: 100 }).catch((error: Error) => {
          if (error.name !== "TimeoutError") throw error;
        });
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
