import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { seedDemoIfEmpty } from "@/lib/auth/seed";
import { getConfig } from "@/lib/config";
import { ensureProjectSandbox } from "@/lib/projects";
import { APP_DIR, getSandboxProvider } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { getProject } from "@/lib/store/projects";
import { updateUrlOf } from "@/lib/updates/app-url";

const created: string[] = [];
afterAll(async () => {
  for (const id of created) await getSandboxProvider().kill(id);
});

describe("sandbox on first use", () => {
  it("seeds the demo project without a sandbox and gives it exactly one when two requests race", async () => {
    const db = await getStore();
    const seed = await seedDemoIfEmpty(db);
    expect(seed?.project.sandboxId).toBeNull();

    const [a, b] = await Promise.all([ensureProjectSandbox(db, seed!.project), ensureProjectSandbox(db, seed!.project)]);
    expect(a.sandboxId).toBe(b.sandboxId);
    const stored = await getProject(db, seed!.project.id);
    expect(stored).toMatchObject({ sandboxId: a.sandboxId, previewUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    created.push(a.sandboxId);
    expect((await fetch(stored!.previewUrl!)).status).toBeLessThan(500);
    // The new sandbox's app points expo-updates at the project.
    expect(JSON.parse(await a.files.read(`${APP_DIR}/app.json`)).expo.updates).toEqual({ url: updateUrlOf(seed!.project.id) });

    // The loser's sandbox was killed: only the winner's directory remains.
    expect(fs.readdirSync(path.join(getConfig().DATA_DIR, "sandboxes"))).toEqual([a.sandboxId]);
    // Later calls reconnect to the recorded one.
    expect((await ensureProjectSandbox(db, stored!)).sandboxId).toBe(a.sandboxId);
  });
});
