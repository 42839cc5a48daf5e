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

/** Rejects with ScreenshotTimeoutError once `deadline` passed; puppeteer's screenshot takes no timeout. */
function beforeDeadline<T>(work: Promise<T>, deadline: number, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ScreenshotTimeoutError(timeoutMs)), Math.max(1, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * Captures the preview at both viewports, in a fresh browser context (no shared cookies or
 * storage between jobs). Both pages load in parallel: each waits for the `load` event, then for
 * the app to render (an app that renders nothing is shot when the time is up). Nothing here may
 * wait on animation frames, which a page that is not in front does not get; the screenshots are
 * taken one after the other, each bringing its page to the front for its frame. Never waits for
 * "network idle": dev servers keep sockets open, so it may never come.
 */
export async function capturePreview(
  browser: Browser,
  url: string,
  timeoutMs: number,
): Promise<Record<ScreenshotKind, Uint8Array>> {
  const deadline = Date.now() + timeoutMs;
  const context = await browser.createBrowserContext();
  try {
    const load = async (kind: ScreenshotKind) => {
      const page = await context.newPage();
      await page.setViewport(VIEWPORTS[kind]);
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
      return page;
    };
    const [mobilePage, desktopPage] = await Promise.all([load("mobile"), load("desktop")]);
    const shoot = async (page: typeof mobilePage) => {
      await page.bringToFront();
      return page.screenshot({ type: "png" });
    };
    // A frame-paint can take a while on a loaded machine: give the shots their own budget.
    const shotDeadline = Date.now() + timeoutMs;
    const mobile = await beforeDeadline(shoot(mobilePage), shotDeadline, timeoutMs);
    const desktop = await beforeDeadline(shoot(desktopPage), shotDeadline, timeoutMs);
    return { mobile, desktop };
  } finally {
    await context.close().catch(() => undefined);
  }
}
