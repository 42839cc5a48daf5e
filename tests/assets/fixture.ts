import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, vi } from "vitest";
import { POST as uploadRoute } from "@/app/api/assets/upload/route";
import { DELETE as deleteRoute } from "@/app/api/assets/delete/route";
import { ASSET_FILES_DIR, ASSET_MANIFEST_PATH, ASSET_STAGING_DIR, type AssetManifest } from "@/lib/assets";
import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import { listProjectAssets } from "@/lib/store/assets";
import { insertProject, updateProjectSandbox, type Project } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

const ORIGIN = "http://localhost:3000";
const noContext = { params: Promise.resolve({}) } as never;

/** The bytes of a blob, or null when it does not exist. */
export async function blobBytes(urlOrPathname: string): Promise<Uint8Array | null> {
  const found = await getBlobStore().get(urlOrPathname);
  return found ? new Uint8Array(await new Response(found.stream).arrayBuffer()) : null;
}

/** Every blob pathname under a prefix (all pages). */
export async function blobPathnames(prefix: string): Promise<string[]> {
  return (await listAllBlobs(getBlobStore(), prefix)).map((blob) => blob.pathname);
}

const hostNames = (dir: string) => fs.readdir(dir).catch(() => [] as string[]);
const sandboxNames = async (sandbox: Sandbox, dir: string) =>
  (await sandbox.files.list(dir).catch(() => [])).map((entry) => entry.name);

/**
 * Owners with projects backed by bare local sandboxes (no template, no dev server: fast), and
 * helpers to call the asset routes and to see everything an upload could have left behind.
 */
export async function createAssetFixture() {
  await resetProcessSingleton("sandboxProvider");
  const db = await getStore();
  const owner = await createTestUser(db, "Owner");
  const stranger = await createTestUser(db, "Stranger");
  const sandboxIds: string[] = [];

  const fixture = {
    db,
    owner,
    stranger,
    async newProject(ownerId = owner.user.id): Promise<{ project: Project; sandbox: Sandbox }> {
      const sandbox = await getSandboxProvider().create();
      sandboxIds.push(sandbox.sandboxId);
      const project = await insertProject(db, { ownerId, name: "assets" });
      await updateProjectSandbox(db, project.id, { sandboxId: sandbox.sandboxId, previewUrl: null });
      return { project: { ...project, sandboxId: sandbox.sandboxId }, sandbox };
    },
    upload(body: FormData, headers: Record<string, string> = owner.headers) {
      return uploadRoute(new Request(`${ORIGIN}/api/assets/upload`, { method: "POST", headers, body }), noContext);
    },
    uploadRequest(request: Request) {
      return uploadRoute(request, noContext);
    },
    remove(body: unknown, headers: Record<string, string> = owner.headers) {
      return deleteRoute(
        new Request(`${ORIGIN}/api/assets/delete`, {
          method: "DELETE",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
        noContext,
      );
    },
    uploadUrl: `${ORIGIN}/api/assets/upload`,
    async manifest(sandbox: Sandbox): Promise<AssetManifest | null> {
      return (await sandbox.files.exists(ASSET_MANIFEST_PATH)) ? JSON.parse(await sandbox.files.read(ASSET_MANIFEST_PATH)) : null;
    },
    /** Everything an upload to `project` could leave: blobs, records, sandbox files, staging, spool files. */
    async leftovers(project: Project, sandbox: Sandbox) {
      return {
        blobs: await blobPathnames(`${project.ownerId}/${project.id}/`),
        records: (await listProjectAssets(db, project.id)).map((record) => record.filename),
        files: await sandboxNames(sandbox, ASSET_FILES_DIR),
        manifest: await fixture.manifest(sandbox),
        staging: await sandboxNames(sandbox, ASSET_STAGING_DIR),
        spool: await hostNames(path.join(getConfig().DATA_DIR, "uploads")),
      };
    },
    async close() {
      for (const sandboxId of sandboxIds) await getSandboxProvider().kill(sandboxId);
    },
  };
  return fixture;
}

export type AssetFixture = Awaited<ReturnType<typeof createAssetFixture>>;

/**
 * Registers the hooks of a test file that uses one fixture (created before all tests, closed
 * after them, mocks restored after each) and returns it; call at the top level of the file.
 */
export function setupAssetFixture(): AssetFixture {
  let fixture: AssetFixture | undefined;
  beforeAll(async () => {
    fixture = await createAssetFixture();
  });
  afterAll(async () => {
    await fixture?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  // The fixture only exists once beforeAll ran; tests reach it through this stand-in.
  return new Proxy({} as AssetFixture, {
    get(_, key) {
      if (!fixture) throw new Error("the asset fixture is used before beforeAll ran");
      return Reflect.get(fixture, key);
    },
  });
}

/** What {@link AssetFixture.leftovers} reports for a project nothing was stored for. */
export const NOTHING_STORED = { blobs: [], records: [], files: [], manifest: null, staging: [], spool: [] };

/** A form with a file part (and a projectId unless it is undefined). */
export function assetForm(projectId: string | undefined, filename: string, bytes: Uint8Array, type = "application/octet-stream"): FormData {
  const form = new FormData();
  if (projectId !== undefined) form.append("projectId", projectId);
  form.append("file", new Blob([bytes.slice()], { type }), filename);
  return form;
}
