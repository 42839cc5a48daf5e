import fs from "node:fs/promises";
import type { Browser } from "puppeteer-core";
import { log } from "@/lib/log";
import { BrowserUnavailableError } from "./errors";

/** Flags for a headless Chromium on a closed network, run as root inside a container. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
  "--hide-scrollbars",
  "--mute-audio",
];

export interface BrowserPool {
  /** The warm browser, launched on first use and relaunched after a crash or close. */
  get(): Promise<Browser>;
  /** How many browsers this pool has launched (reuse is observable). */
  readonly launches: number;
  close(): Promise<void>;
}

/** Keeps one Chromium process warm; jobs share it and isolate themselves with contexts. */
export function createBrowserPool(executablePath: string): BrowserPool {
  let current: Promise<Browser> | undefined;
  let launches = 0;
  let closing = false;

  const launch = async (): Promise<Browser> => {
    // A missing browser is the operator's to fix, not an internal error: say how.
    await fs.access(executablePath, fs.constants.X_OK).catch((error: NodeJS.ErrnoException) => {
      throw new BrowserUnavailableError(executablePath, error.code === "ENOENT" ? "no such file" : "not executable", { cause: error });
    });
    const puppeteer = await import("puppeteer-core");
    launches += 1;
    const browser = await puppeteer
      .launch({
        executablePath,
        headless: true,
        args: CHROMIUM_ARGS,
        // The pool owns the process lifetime; do not let puppeteer hook the server's signals.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      })
      .catch((error: Error) => {
        throw new BrowserUnavailableError(executablePath, error.message.split("\n")[0], { cause: error });
      });
    browser.once("disconnected", () => {
      if (closing) return;
      log.warn("screenshot browser disconnected; the next job relaunches it");
      current = undefined;
    });
    return browser;
  };

  return {
    get() {
      if (!current) {
        current = launch();
        current.catch(() => {
          current = undefined;
        });
      }
      return current;
    },
    get launches() {
      return launches;
    },
    async close() {
      const pending = current;
      current = undefined;
      closing = true;
      try {
        if (pending) await (await pending.catch(() => undefined))?.close();
      } finally {
        closing = false;
      }
    },
  };
}
