import fs from "node:fs";
import path from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { CHROMIUM_ARGS } from "@/lib/screenshots/browser";
import { ARTIFACTS_DIR } from "./server";

/** The system Chromium, as the product's screenshot code uses it. */
export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    defaultViewport: { width: 1280, height: 900 },
  });
}

/**
 * Waits until React has hydrated the page (`<html data-hydrated>`, set by the root layout). Before
 * that the server's HTML is on screen, but a click can find no handler yet and text typed into a
 * field can be reset by hydration (a rename typed right after a load was lost under load).
 */
export async function untilHydrated(page: Page): Promise<void> {
  await page.waitForSelector("html[data-hydrated]");
}

/** Saves a full-page screenshot of the current state as a test artefact; returns its path. */
export async function saveArtifact(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file as `${string}.png`, fullPage: true });
  return file;
}

export interface RecordedBody {
  method: string;
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * Records the body of every response the page receives (documents, scripts, JSON, server
 * function answers, images), except event streams, which never end.
 */
export function recordResponses(page: Page): RecordedBody[] {
  const recorded: RecordedBody[] = [];
  page.on("response", async (response) => {
    const contentType = response.headers()["content-type"] ?? "";
    if (contentType.startsWith("text/event-stream")) return;
    const status = response.status();
    if (status >= 300 && status < 400) return;
    try {
      recorded.push({ method: response.request().method(), url: response.url(), status, contentType, body: await response.buffer() });
    } catch {
      // The page navigated away before the body was read; its later responses are recorded.
    }
  });
  return recorded;
}

/**
 * Collects uncaught exceptions and console errors of the page (React reports hydration
 * mismatches there), except failed resource loads, whose statuses the tests check themselves.
 */
export function recordPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`uncaught: ${error instanceof Error ? error.message : String(error)}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(`console: ${message.text()}`);
  });
  return errors;
}
