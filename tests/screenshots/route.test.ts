import "../helpers/real-dev-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as screenshotsRoute } from "@/app/api/projects/[id]/screenshots/route";
import { getBlobStore } from "@/lib/blob";
import { getBrowserPool, screenshotPathname } from "@/lib/screenshots";
import { awaitQueuedJob } from "../helpers/jobs";
import { createTestUser } from "../helpers/users";
import { pngPixels, pngSize } from "../helpers/png";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { reloadConfig } from "@/lib/config";

let fx: CloudFixture;
/**
 * The preview's first load has Metro bundle the app: minutes on a 2-core machine running two
 * suites, far past puppeteer's 30 s default. Every wait below ends as soon as its condition holds.
 */
const FIRST_LOAD_MS = 300_000;

const shoot = (projectId: string, headers: Record<string, string>) =>
  screenshotsRoute(new Request(`http://localhost/api/projects/${projectId}/screenshots`, { method: "POST", headers }), {
    params: Promise.resolve({ id: projectId }),
  });

/** Queues screenshots as the owner and waits for the job; its result is what the route answered before jobs. */
const shootAndWait = async (projectId: string) => awaitQueuedJob(await shoot(projectId, fx.owner.headers), fx.owner.headers);

async function storedBytes(pathname: string): Promise<{ bytes: Uint8Array; contentType: string }> {
  const blob = await getBlobStore().get(pathname);
  if (!blob) throw new Error(`${pathname} was not stored`);
  return { bytes: new Uint8Array(await new Response(blob.stream).arrayBuffer()), contentType: blob.blob.contentType };
}

beforeAll(async () => {
  // A new project's first screenshot waits for that first load too: the product's 20 s would
  // send it to a retry here, which the tests below count as a failure.
  process.env.SCREENSHOT_TIMEOUT_MS = String(FIRST_LOAD_MS);
  reloadConfig();
  fx = await startCloudFixture();
});
afterAll(async () => {
  await getBrowserPool().close();
  await fx.close();
});

describe("POST /api/projects/<id>/screenshots", () => {
  it("stores a 750×1334 mobile and a 1920×1080 desktop PNG of the preview, reusing one browser", { timeout: FIRST_LOAD_MS + 120_000 }, async () => {
    const project = await fx.newProject();
    const job = await shootAndWait(project.id);
    expect(job).toMatchObject({ kind: "screenshots", state: "succeeded", attempts: 1 });
    expect(job.result).toEqual({
      mobileUrl: expect.stringMatching(new RegExp(`/blob/${screenshotPathname(project.id, "mobile")}$`)),
      desktopUrl: expect.stringMatching(new RegExp(`/blob/${screenshotPathname(project.id, "desktop")}$`)),
    });
    const mobile = await storedBytes(screenshotPathname(project.id, "mobile"));
    const desktop = await storedBytes(screenshotPathname(project.id, "desktop"));
    expect(mobile.contentType).toBe("image/png");
    expect(pngSize(mobile.bytes)).toEqual({ width: 750, height: 1334 });
    expect(pngSize(desktop.bytes)).toEqual({ width: 1920, height: 1080 });

    // A second job overwrites the fixed paths with the same warm browser.
    const launches = getBrowserPool().launches;
    expect((await shootAndWait(project.id)).state).toBe("succeeded");
    expect(getBrowserPool().launches).toBe(launches);
  });

  it("shows the template's screen as React Native Web renders it from Metro's bundle", { timeout: FIRST_LOAD_MS + 120_000 }, async () => {
    const project = await fx.newProject();
    // What Metro serves the browser: the expo-router entry bundle, rendered into the DOM by React Native Web.
    const page = await (await getBrowserPool().get()).newPage();
    page.setDefaultTimeout(FIRST_LOAD_MS);
    try {
      const entryBundles: number[] = [];
      page.on("response", (response) => {
        if (new URL(response.url()).pathname === "/node_modules/expo-router/entry.bundle") entryBundles.push(response.status());
      });
      await page.goto(project.previewUrl!, { waitUntil: "load" });
      await page.waitForFunction(() => (document.getElementById("root")?.textContent ?? "").includes("Welcome to your app"), { polling: 100 });
      expect(entryBundles).toEqual([200]);
      const texts = await page.$$eval('#root [dir="auto"]', (nodes) => nodes.map((node) => node.textContent));
      expect(texts).toEqual(expect.arrayContaining(["Welcome to your app", "Describe what you want to build and watch it appear here."]));
    } finally {
      await page.close();
    }

    expect((await shootAndWait(project.id)).state).toBe("succeeded");
    // The picture holds more than a blank page: text pixels differ from the background.
    const { rgba } = pngPixels((await storedBytes(screenshotPathname(project.id, "mobile"))).bytes);
    const colours = new Map<number, number>();
    for (let i = 0; i < rgba.length; i += 4) {
      const colour = (rgba[i] << 16) | (rgba[i + 1] << 8) | rgba[i + 2];
      colours.set(colour, (colours.get(colour) ?? 0) + 1);
    }
    const background = Math.max(...colours.values());
    const foreground = rgba.length / 4 - background;
    expect(foreground / (rgba.length / 4)).toBeGreaterThan(0.001);
  });

  it("hides other users' projects", async () => {
    const project = await fx.newProject();
    const stranger = await createTestUser(fx.db, "Stranger");
    expect((await shoot(project.id, stranger.headers)).status).toBe(404);
    expect((await shoot(project.id, {})).status).toBe(401);
  });
});
