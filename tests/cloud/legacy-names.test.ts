import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { migrateLegacyBackendNames } from "@/lib/cloud/legacy-names";
import { APP_DIR, type Sandbox } from "@/lib/sandbox";
import { getProject, type Project } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "./fixture";
import { openProjectSandbox, restartProjectSandbox } from "@/lib/workspace";

let fx: CloudFixture;
beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

const git = async (sandbox: Sandbox, command: string) => (await sandbox.commands.run(command, { cwd: APP_DIR })).stdout.trim();

/**
 * Turns an enabled app into what earlier versions of the service wrote: `backend.json` and
 * `backend/` (with the old tsconfig), the layout reading `APP_PUBLIC_BACKEND_URL`, and that
 * variable in `.env.local`. Returns the commit holding that state.
 */
async function makeLegacy(sandbox: Sandbox): Promise<string> {
  const layoutPath = `${APP_DIR}/app/_layout.tsx`;
  await sandbox.files.write(layoutPath, (await sandbox.files.read(layoutPath)).replaceAll("EXPO_PUBLIC_CONVEX_URL", "APP_PUBLIC_BACKEND_URL"));
  await sandbox.files.write(`${APP_DIR}/.env.local`, (await sandbox.files.read(`${APP_DIR}/.env.local`)).replace("EXPO_PUBLIC_CONVEX_URL", "APP_PUBLIC_BACKEND_URL"));
  await git(sandbox, "git mv convex.json backend.json && git mv convex backend");
  await sandbox.files.write(`${APP_DIR}/backend.json`, '{\n  "functions": "backend/"\n}\n');
  await sandbox.files.write(
    `${APP_DIR}/backend/tsconfig.json`,
    JSON.stringify({ extends: "../tsconfig.json", compilerOptions: { module: "esnext", moduleResolution: "bundler", lib: ["ES2021"], target: "ES2021" } }, null, 2),
  );
  await sandbox.files.write(`${APP_DIR}/backend/messages.ts`, "export const greeting = 'kept as the user wrote it';\n");
  return git(sandbox, 'git add -A && git commit -q -m "Enabled by an earlier version" && git rev-parse HEAD');
}

async function expectMigrated(sandbox: Sandbox, legacyCommit: string, deploymentUrl: string) {
  expect(await git(sandbox, `git rev-list --count ${legacyCommit}..HEAD`)).toBe("1");
  // Every legacy file is gone under its new name, the layout changed, and nothing else did.
  const legacyFiles = (await git(sandbox, `git ls-tree -r --name-only ${legacyCommit} -- backend`)).split("\n");
  const changed = (await git(sandbox, "git show --name-status --no-renames --format= HEAD")).split("\n").sort();
  expect(changed).toEqual(
    [
      "A\tconvex.json",
      "D\tbackend.json",
      "M\tapp/_layout.tsx",
      ...legacyFiles.flatMap((file) => [`D\t${file}`, `A\t${file.replace(/^backend\//, "convex/")}`]),
    ].sort(),
  );
  expect(legacyFiles).toEqual(expect.arrayContaining(["backend/messages.ts", "backend/schema.ts", "backend/tsconfig.json"]));
  const layoutDiff = await git(sandbox, "git show --format= -U0 HEAD -- app/_layout.tsx");
  expect(layoutDiff.split("\n").filter((line) => /^[-+](?![-+])/.test(line))).toEqual([
    "-const backendClient = process.env.APP_PUBLIC_BACKEND_URL",
    "-  ? new ConvexReactClient(process.env.APP_PUBLIC_BACKEND_URL, { unsavedChangesWarning: false })",
    "+const backendClient = process.env.EXPO_PUBLIC_CONVEX_URL",
    "+  ? new ConvexReactClient(process.env.EXPO_PUBLIC_CONVEX_URL, { unsavedChangesWarning: false })",
  ]);
  expect(await sandbox.files.read(`${APP_DIR}/convex/messages.ts`)).toBe("export const greeting = 'kept as the user wrote it';\n");
  expect(JSON.parse(await sandbox.files.read(`${APP_DIR}/convex/tsconfig.json`))).toMatchObject({ include: ["./**/*"], compilerOptions: { types: [] } });
  expect(await sandbox.files.read(`${APP_DIR}/.env.local`)).toBe(`EXPO_PUBLIC_CONVEX_URL=${deploymentUrl}\n`);
}

describe("projects enabled with the old names", () => {
  let project: Project;
  let sandbox: Sandbox;
  let deploymentUrl: string;

  beforeAll(async () => {
    project = await fx.newProject();
    ({ deploymentUrl } = await enableCloudBackend(project, openProjectSandbox));
    project = (await getProject(fx.db, project.id))!;
    sandbox = await fx.sandboxOf(project);
  });

  it("are migrated by a restore, in one commit that changes nothing else, and only once", async () => {
    const legacy = await makeLegacy(sandbox);
    await restartProjectSandbox(sandbox, project);
    await expectMigrated(sandbox, legacy, deploymentUrl);
    expect(await migrateLegacyBackendNames(sandbox)).toBe(false);
    expect(await git(sandbox, `git rev-list --count ${legacy}..HEAD`)).toBe("1");
  });

  it("are migrated by the next enable", async () => {
    const legacy = await makeLegacy(sandbox);
    expect((await enableCloudBackend(project, openProjectSandbox)).deploymentUrl).toBe(deploymentUrl);
    await expectMigrated(sandbox, legacy, deploymentUrl);
  });

  it("keep a backend.json that is not ours", async () => {
    await sandbox.files.write(`${APP_DIR}/backend.json`, '{ "functions": "server/" }\n');
    expect(await migrateLegacyBackendNames(sandbox)).toBe(false);
    expect(await sandbox.files.read(`${APP_DIR}/backend.json`)).toBe('{ "functions": "server/" }\n');
  });
});
