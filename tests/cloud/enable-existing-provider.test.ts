import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as enableRoute } from "@/app/api/cloud/enable/route";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import { getProject, type Project } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "./fixture";

let fx: CloudFixture;
beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

const enable = (projectId: string) =>
  enableRoute(
    new Request("http://localhost/api/cloud/enable", {
      method: "POST",
      headers: { ...fx.owner.headers, "content-type": "application/json" },
      body: JSON.stringify({ projectId }),
    }),
    undefined,
  );

const git = async (sandbox: Sandbox, command: string) => (await sandbox.commands.run(command, { cwd: APP_DIR })).stdout.trim();

/** Replaces the app's root layout with one that has its own Convex provider, committed as the user's work. */
async function useOwnProviderLayout(project: Project, clientUrl: string): Promise<Sandbox> {
  const sandbox = await fx.sandboxOf(project);
  const layout = `import { ConvexProvider, ConvexReactClient } from "convex/react";
import { Stack } from "expo-router";

const convex = new ConvexReactClient(${clientUrl}, { unsavedChangesWarning: false });

export default function RootLayout() {
  return (
    <ConvexProvider client={convex}>
      <Stack />
    </ConvexProvider>
  );
}
`;
  await sandbox.files.write(`${APP_DIR}/app/_layout.tsx`, layout);
  await git(sandbox, 'git add -A && git commit -q -m "The app brings its own Convex client"');
  return sandbox;
}

describe("POST /api/cloud/enable on a layout with its own Convex provider", () => {
  it("refuses with 409 before provisioning when the client is not created from an env var, and writes nothing", async () => {
    const project = await fx.newProject();
    const sandbox = await useOwnProviderLayout(project, '"https://happy-otter-123.convex.cloud"');
    const head = await git(sandbox, "git rev-parse HEAD");

    const response = await enable(project.id);
    expect(response.status).toBe(409);
    const body = await response.json();
    expect(body.error.code).toBe("layout_has_convex_provider");
    expect(body.error.message).toContain("app/_layout.tsx:4");
    expect(body.error.message).toContain("new ConvexReactClient(process.env.EXPO_PUBLIC_CONVEX_URL!)");

    expect(await fx.emulatedProjects(project)).toBe(0);
    expect(await git(sandbox, "git status --porcelain")).toBe("");
    expect(await git(sandbox, "git rev-parse HEAD")).toBe(head);
    expect(await sandbox.files.exists(`${APP_DIR}/convex.json`)).toBe(false);
    expect((await getProject(fx.db, project.id))?.backendProject ?? null).toBeNull();
  });

  it("keeps the app's provider as the only client, points it at EXPO_PUBLIC_CONVEX_URL and finishes enable", async () => {
    const project = await fx.newProject();
    const sandbox = await useOwnProviderLayout(project, "process.env.CONVEX_URL!");

    const response = await enable(project.id);
    expect(response.status).toBe(200);
    const state = (await getProject(fx.db, project.id))?.backendProject;
    expect(state).toMatchObject({ kind: "connected" });
    expect(state?.kind === "connected" && state.warningMessage).toContain(
      "app/_layout.tsx: the app's ConvexReactClient now reads process.env.EXPO_PUBLIC_CONVEX_URL (was process.env.CONVEX_URL).",
    );

    const layout = await sandbox.files.read(`${APP_DIR}/app/_layout.tsx`);
    expect(layout).not.toContain("BackendWrapper");
    expect(layout.match(/new ConvexReactClient\(/g)).toHaveLength(1);
    expect(layout).toContain("new ConvexReactClient(process.env.EXPO_PUBLIC_CONVEX_URL!, { unsavedChangesWarning: false })");
    expect(await sandbox.files.exists(`${APP_DIR}/convex.json`)).toBe(true);
    expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).toMatch(/^EXPO_PUBLIC_CONVEX_URL=/);
    expect(await git(sandbox, "git show --name-only --format= HEAD")).toContain("app/_layout.tsx");
  });
});
