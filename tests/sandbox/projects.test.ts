import "../helpers/real-dev-servers";
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as createProjectRoute } from "@/app/api/projects/route";
import { getConfig, reloadConfig } from "@/lib/config";
import { APP_DEV_SERVER_ROLE } from "@/lib/dev-servers";
import { findProcessesByRole, getSandboxProvider } from "@/lib/sandbox";
import { isProcessAlive } from "@/lib/sandbox/drivers/local-os-processes";
import { resetProcessSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { getProject, listProjects } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

const sandboxesRoot = path.join(process.env.DATA_DIR!, "sandboxes");
let owner: Awaited<ReturnType<typeof createTestUser>>;
const sandboxIds: string[] = [];

const createProject = (name: string) =>
  createProjectRoute(
    new Request("http://localhost:3000/api/projects", {
      method: "POST",
      headers: { ...owner.headers, "content-type": "application/json" },
      body: JSON.stringify({ name }),
    }),
    { params: Promise.resolve({}) } as never,
  );

beforeAll(async () => {
  await resetProcessSingleton("sandboxProvider");
  owner = await createTestUser(await getStore());
});

afterAll(async () => {
  for (const sandboxId of sandboxIds) await getSandboxProvider().kill(sandboxId);
});

describe("POST /api/projects on the embedded defaults", () => {
  it("creates the sandbox from the template, pointed at the project's update URL, with a preview served by Expo", async () => {
    const response = await createProject("Preview me");
    expect(response.status).toBe(201);
    const body = await response.json();
    sandboxIds.push(body.sandboxId);
    expect(body).toMatchObject({ name: "Preview me", sandboxId: expect.stringMatching(/^local-/), previewUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });

    const appDir = path.join(sandboxesRoot, body.sandboxId, "home", "app");
    for (const file of ["package.json", "package-lock.json", "app/_layout.tsx", "app/index.tsx", "tsconfig.json", ".gitignore", "node_modules/expo/package.json"]) {
      await expect(fs.stat(path.join(appDir, file)), file).resolves.toBeTruthy();
    }
    expect(await fs.readFile(path.join(appDir, ".gitignore"), "utf8")).toMatch(/^\.env\.local$/m);
    const git = promisify(execFile);
    // The template's commit, then the project's update URL in app.json (what a native build embeds for expo-updates).
    expect((await git("git", ["log", "--format=%s"], { cwd: appDir })).stdout.trim().split("\n")).toEqual([
      "Point expo-updates at this project's update URL",
      "Create app from the app template",
    ]);
    const appJson = JSON.parse(await fs.readFile(path.join(appDir, "app.json"), "utf8"));
    expect(appJson.expo).toMatchObject({ runtimeVersion: "1.0.0", updates: { url: `${getConfig().PUBLIC_BASE_URL}/api/projects/${body.id}/updates` } });
    expect((await git("git", ["status", "--porcelain"], { cwd: appDir })).stdout).toBe("");

    // Expo's dev server answers the page, and Metro bundles the app's own code into its entry bundle.
    const preview = await fetch(body.previewUrl);
    expect(preview.status).toBe(200);
    const page = await preview.text();
    const entry = /<script src="(\/node_modules\/expo-router\/entry\.bundle\?platform=web[^"]*)"/.exec(page);
    expect(entry, page).not.toBeNull();
    const bundle = await fetch(new URL(entry![1].replaceAll("&amp;", "&"), body.previewUrl));
    expect(bundle.status).toBe(200);
    expect(await bundle.text()).toContain("Welcome to your app");

    const stored = await getProject(await getStore(), body.id);
    expect(stored).toMatchObject({ sandboxId: body.sandboxId, previewUrl: body.previewUrl });
  });

  it("leaves neither a project row nor a sandbox behind when the dev server cannot start", async () => {
    vi.stubEnv("APP_DEV_COMMAND", "echo 'boom' >&2; exit 1");
    reloadConfig();
    try {
      const before = await fs.readdir(sandboxesRoot);
      const response = await createProject("Doomed");
      expect(response.status).toBe(502);
      expect((await response.json()).error.code).toBe("app_dev_server_failed");
      expect((await listProjects(await getStore(), owner.user.id)).map((project) => project.name)).not.toContain("Doomed");
      expect(await fs.readdir(sandboxesRoot)).toEqual(before);
    } finally {
      vi.unstubAllEnvs();
      reloadConfig();
    }
  });

  it("keeps the preview server running after the request, and kills it with the sandbox", async () => {
    const [sandboxId] = sandboxIds;
    const sandbox = await getSandboxProvider().connect(sandboxId);
    const [server] = await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE);
    expect(await isProcessAlive(server.pid)).toBe(true);
    await getSandboxProvider().kill(sandboxId);
    sandboxIds.length = 0;
    expect(await isProcessAlive(server.pid)).toBe(false);
  });
});
