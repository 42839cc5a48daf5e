import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBrowserPool } from "@/lib/screenshots/browser";
import { capturePreview } from "@/lib/screenshots/capture";
import { PreviewUnreachableError, ScreenshotTimeoutError } from "@/lib/screenshots/errors";
import { startHttpServer } from "../helpers/http-server";
import { pngSize } from "../helpers/png";

describe("capturePreview (real Chromium)", () => {
  const pool = createBrowserPool(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium");
  let server: Awaited<ReturnType<typeof startHttpServer>>;

  beforeAll(async () => {
    server = await startHttpServer((request, response) => {
      if (request.url === "/hang") {
        // Headers sent, body never finished: the load event never fires.
        response.writeHead(200, { "content-type": "text/html" });
        response.write("<html><body>loading");
        return;
      }
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<!doctype html><html><body style='margin:0;background:#2a6'><h1>Preview</h1></body></html>");
    });
  });
  afterAll(async () => {
    await pool.close();
    await server.close();
  });

  it("takes mobile (750×1334 pixels) and desktop (1920×1080) PNGs", async () => {
    const shots = await capturePreview(await pool.get(), server.url + "/", 15_000);
    expect(pngSize(shots.mobile)).toEqual({ width: 750, height: 1334 });
    expect(pngSize(shots.desktop)).toEqual({ width: 1920, height: 1080 });
  });

  it("reuses the warm browser for the next job", async () => {
    const launchesBefore = pool.launches;
    await capturePreview(await pool.get(), server.url + "/", 15_000);
    await capturePreview(await pool.get(), server.url + "/", 15_000);
    expect(pool.launches).toBe(launchesBefore);
  });

  it("times out with a 504 error on a page that never loads", async () => {
    const error = await capturePreview(await pool.get(), server.url + "/hang", 1_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScreenshotTimeoutError);
    expect(error).toMatchObject({ status: 504, code: "screenshot_timeout" });
  });

  it("reports an unreachable preview as 502", async () => {
    const closed = await startHttpServer(() => undefined);
    await closed.close();
    const error = await capturePreview(await pool.get(), closed.url + "/", 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreviewUnreachableError);
    expect(error).toMatchObject({ status: 502 });
  });

  it("relaunches the browser after it crashes", async () => {
    const browser = await pool.get();
    const launchesBefore = pool.launches;
    const disconnected = new Promise((resolve) => browser.once("disconnected", resolve));
    browser.process()?.kill("SIGKILL");
    await disconnected;
    const shots = await capturePreview(await pool.get(), server.url + "/", 15_000);
    expect(pool.launches).toBe(launchesBefore + 1);
    expect(pngSize(shots.desktop).width).toBe(1920);
  });
});
