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

    const [first, second] = await Promise.all([ensureProjectSandbox(db, seed!.project), ensureProjectSandbox(db, seed!.project)]);
    const a = first.sandbox;
    expect(a.sandboxId).toBe(second.sandbox.sandboxId);
    expect([first.created, second.created].sort()).toEqual([false, true]);
    const stored = await getProject(db, seed!.project.id);
    expect(stored).toMatchObject({ sandboxId: a.sandboxId, previewUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    created.push(a.sandboxId);
    expect((await fetch(stored!.previewUrl!)).status).toBeLessThan(500);
    // The new sandbox's app points expo-updates at the project.
    expect(JSON.parse(await a.files.read(`${APP_DIR}/app.json`)).expo.updates).toEqual({ url: updateUrlOf(seed!.project.id) });

    // The loser's sandbox was killed: only the winner's directory remains.
    expect(fs.readdirSync(path.join(getConfig().DATA_DIR, "sandboxes"))).toEqual([a.sandboxId]);
    // Later calls reconnect to the recorded one.
    expect(await ensureProjectSandbox(db, stored!)).toMatchObject({ sandbox: { sandboxId: a.sandboxId }, created: false });

    // A sandbox that is gone (killed, or lost with its machine) is replaced, once, by racing requests.
    await getSandboxProvider().kill(a.sandboxId);
    const [c, d] = await Promise.all([ensureProjectSandbox(db, stored!), ensureProjectSandbox(db, stored!)]);
    expect(c.sandbox.sandboxId).toBe(d.sandbox.sandboxId);
    expect(c.sandbox.sandboxId).not.toBe(a.sandboxId);
    expect([c.created, d.created].sort()).toEqual([false, true]);
    created.push(c.sandbox.sandboxId);
    expect(await getProject(db, seed!.project.id)).toMatchObject({ sandboxId: c.sandbox.sandboxId });
    expect(fs.readdirSync(path.join(getConfig().DATA_DIR, "sandboxes"))).toEqual([c.sandbox.sandboxId]);
  });
});
