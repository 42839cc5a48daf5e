import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as screenshotsRoute } from "@/app/api/projects/[id]/screenshots/route";
import { getBlobStore } from "@/lib/blob";
import { getBrowserPool, screenshotPathname } from "@/lib/screenshots";
import { createTestUser } from "../helpers/users";
import { pngSize } from "../helpers/png";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";

let fx: CloudFixture;

const shoot = (projectId: string, headers: Record<string, string>) =>
  screenshotsRoute(new Request(`http://localhost/api/projects/${projectId}/screenshots`, { method: "POST", headers }), {
    params: Promise.resolve({ id: projectId }),
  });

async function storedBytes(pathname: string): Promise<{ bytes: Uint8Array; contentType: string }> {
  const blob = await getBlobStore().get(pathname);
  if (!blob) throw new Error(`${pathname} was not stored`);
  return { bytes: new Uint8Array(await new Response(blob.stream).arrayBuffer()), contentType: blob.blob.contentType };
}

beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await getBrowserPool().close();
  await fx.close();
});

describe("POST /api/projects/<id>/screenshots", () => {
  it("stores a 750×1334 mobile and a 1920×1080 desktop PNG of the preview, reusing one browser", async () => {
    const project = await fx.newProject();
    const response = await shoot(project.id, fx.owner.headers);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({
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
    expect((await shoot(project.id, fx.owner.headers)).status).toBe(200);
    expect(getBrowserPool().launches).toBe(launches);
  });

  it("hides other users' projects", async () => {
    const project = await fx.newProject();
    const stranger = await createTestUser(fx.db, "Stranger");
    expect((await shoot(project.id, stranger.headers)).status).toBe(404);
    expect((await shoot(project.id, {})).status).toBe(401);
  });
});
