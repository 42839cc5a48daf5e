import { afterAll, describe, expect, it } from "vitest";
import { GET as listAssets } from "@/app/api/assets/route";
import { readBackendSnapshot, realtimeClientSettings } from "@/app/projects/[id]/data";
import { parseConfig } from "@/lib/config";
import { createProject } from "@/lib/projects";
import { APP_DIR, getSandboxProvider } from "@/lib/sandbox";
import { getStore } from "@/lib/store";
import { upsertCredentials } from "@/lib/store/credentials";
import { insertRunningOperation } from "@/lib/store/operations";
import { currentInstance } from "@/lib/instance";
import { getProject, insertProject, setBackendProject } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

const sandboxes: string[] = [];
afterAll(async () => {
  for (const id of sandboxes) await getSandboxProvider().kill(id);
});

describe("backend snapshot", () => {
  it("shows the names of the steps a running enable finished, never their contents", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const project = await insertProject(db, { ownerId: user.id, name: "app" });
    expect(await readBackendSnapshot(db, project)).toEqual({ backendProject: null, progress: null, account: null });

    await setBackendProject(db, project.id, { kind: "connecting" });
    await insertRunningOperation(db, {
      projectId: project.id,
      kind: "enable",
      leaseOwner: "test",
      instance: await currentInstance(db),
      leaseMs: 60_000,
      steps: { created: { projectSlug: "s" }, provisioned: { adminKey: "ciphertext" } },
    });
    const snapshot = await readBackendSnapshot(db, (await getProject(db, project.id))!);
    expect(snapshot).toEqual({
      backendProject: { kind: "connecting" },
      progress: { kind: "enable", finished: ["created", "provisioned"] },
      account: null,
    });
    expect(JSON.stringify(snapshot)).not.toContain("ciphertext");
  });

  it("says whose account holds the backend project: managed by the service, or the user's own", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const project = await insertProject(db, { ownerId: user.id, name: "app" });
    const credentials = {
      projectId: project.id,
      userId: user.id,
      teamSlug: "t",
      projectSlug: "p",
      deploymentUrl: "http://127.0.0.1:1",
      deploymentName: "d",
      adminKey: "dev:d|secret-admin-key",
      accessToken: null,
      backendProjectId: 1,
    };
    await upsertCredentials(db, { ...credentials, mode: "managed" });
    expect((await readBackendSnapshot(db, project)).account).toBe("managed");
    await upsertCredentials(db, { ...credentials, mode: "oauth" });
    const own = await readBackendSnapshot(db, project);
    expect(own.account).toBe("own");
    expect(JSON.stringify(own)).not.toContain("secret-admin-key");
  });
});

describe("realtime client settings", () => {
  it("hand the browser the SSE route, or only Pusher's public key and cluster", () => {
    expect(realtimeClientSettings(parseConfig({}), "p1")).toEqual({
      event: "error-notification",
      transport: "sse",
      streamUrl: "/api/projects/p1/errors/stream",
    });
    const pusher = parseConfig({ REALTIME_DRIVER: "pusher", PUSHER_APP_ID: "1", PUSHER_KEY: "public-key", PUSHER_SECRET: "the-secret-value", PUSHER_CLUSTER: "eu" });
    const settings = realtimeClientSettings(pusher, "p1");
    expect(settings).toEqual({
      event: "error-notification",
      transport: "pusher",
      key: "public-key",
      cluster: "eu",
      channel: "private-p1-errors",
      authEndpoint: "/api/realtime/auth",
      historyUrl: "/api/projects/p1/errors",
    });
    expect(JSON.stringify(settings)).not.toContain("the-secret-value");
  });
});

describe("GET /api/assets", () => {
  it("lists the manifest's entries to the owner only", async () => {
    const db = await getStore();
    const owner = await createTestUser(db, "Owner");
    const stranger = await createTestUser(db, "Stranger");
    const project = await createProject(db, owner.user.id, "assets app");
    sandboxes.push(project.sandboxId!);
    const url = `http://localhost/api/assets?projectId=${project.id}`;
    const call = (headers: Record<string, string>) => listAssets(new Request(url, { headers }), undefined);

    expect((await call({})).status).toBe(401);
    expect((await call(stranger.headers)).status).toBe(404);
    expect(await (await call(owner.headers)).json()).toEqual({ assets: [] });

    const sandbox = await getSandboxProvider().connect(project.sandboxId!);
    const entry = { blobUrl: "http://localhost/blob/x/logo.png", localPath: `${APP_DIR}/assets/images/logo.png`, contentType: "image/png", size: 68 };
    await sandbox.files.write(
      `${APP_DIR}/assets/manifest.json`,
      JSON.stringify({ assets: { "logo.png": entry, "broken.png": { blobUrl: 1 } } }),
    );
    expect(await (await call(owner.headers)).json()).toEqual({
      assets: [{ filename: "logo.png", blobUrl: entry.blobUrl, contentType: "image/png", size: 68 }],
    });
  });
});
