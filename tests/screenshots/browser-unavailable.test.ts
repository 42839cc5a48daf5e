import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as screenshotsRoute } from "@/app/api/projects/[id]/screenshots/route";
import { reloadConfig } from "@/lib/config";
import { createBrowserPool } from "@/lib/screenshots/browser";
import { getBrowserPool } from "@/lib/screenshots";
import { getStore } from "@/lib/store";
import { insertProject } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

const missingBrowser = path.join(process.env.DATA_DIR!, "no-such-chromium");

beforeAll(() => {
  process.env.CHROMIUM_PATH = missingBrowser;
  reloadConfig();
});
afterAll(async () => {
  await getBrowserPool().close();
  delete process.env.CHROMIUM_PATH;
  reloadConfig();
});

describe("screenshots without a browser", () => {
  it("answer 503 browser_unavailable naming the fix when CHROMIUM_PATH points to a missing file", async () => {
    const db = await getStore();
    const owner = await createTestUser(db, "Owner");
    // No sandbox: the browser check comes before the preview is started.
    const project = await insertProject(db, { ownerId: owner.user.id, name: "no-browser" });
    const response = await screenshotsRoute(
      new Request(`http://localhost/api/projects/${project.id}/screenshots`, { method: "POST", headers: owner.headers }),
      { params: Promise.resolve({ id: project.id }) },
    );
    expect(response.status).toBe(503);
    const body = await response.json();
    expect(body.error.code).toBe("browser_unavailable");
    expect(body.error.message).toContain(missingBrowser);
    expect(body.error.message).toContain("apt-get install chromium");
    expect(body.error.message).toContain("CHROMIUM_PATH");
  });

  it("refuse a CHROMIUM_PATH that is not executable, and a file that is no browser", async () => {
    const notExecutable = path.join(process.env.DATA_DIR!, "chromium.txt");
    fs.writeFileSync(notExecutable, "not a browser");
    await expect(createBrowserPool(notExecutable).get()).rejects.toMatchObject({ status: 503, code: "browser_unavailable" });

    const notABrowser = path.join(process.env.DATA_DIR!, "fake-chromium");
    fs.writeFileSync(notABrowser, "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const pool = createBrowserPool(notABrowser);
    await expect(pool.get()).rejects.toMatchObject({ status: 503, code: "browser_unavailable" });
    await pool.close();
  });
});
