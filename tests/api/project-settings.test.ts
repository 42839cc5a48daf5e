import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as connectRoute } from "@/app/api/backend/managed/connect/route";
import { GET as listEnvRoute, PUT as setEnvRoute } from "@/app/api/projects/[id]/env/route";
import { DELETE as deleteRoute, GET as getRoute, PATCH as renameRoute } from "@/app/api/projects/[id]/route";
import { queryEnvVariable } from "@/lib/backend";
import { getBlobStore, listAllBlobs } from "@/lib/blob";
import { getSandboxProvider, SandboxNotFoundError } from "@/lib/sandbox";
import { currentInstance } from "@/lib/instance";
import { getCredentials } from "@/lib/store/credentials";
import { insertRunningOperation } from "@/lib/store/operations";
import { getProject } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { createTestUser } from "../helpers/users";

let fx: CloudFixture;

const call = (handler: typeof getRoute, projectId: string, init: RequestInit & { headers: Record<string, string> }, subpath = "") =>
  handler(new Request(`http://localhost/api/projects/${projectId}${subpath}`, init), { params: Promise.resolve({ id: projectId }) });

async function connectManaged(projectId: string): Promise<void> {
  const response = await connectRoute(
    new Request("http://localhost/api/backend/managed/connect", {
      method: "POST",
      headers: { ...fx.owner.headers, "content-type": "application/json" },
      body: JSON.stringify({ projectId }),
    }),
    undefined,
  );
  expect(response.status).toBe(200);
}

const emulatorProjectCount = async (slug: string) =>
  (await fx.db.query<{ count: number }>("select count(*)::int as count from emulator_projects where slug = $1", [slug])).rows[0].count;

beforeAll(async () => {
  fx = await startCloudFixture();
});
afterAll(async () => {
  await fx.close();
});

describe("PATCH /api/projects/<id>", () => {
  it("renames the owner's project, refuses an empty name and hides it from others", async () => {
    const project = await fx.newProject();
    const json = (name: string) => ({ method: "PATCH", headers: { ...fx.owner.headers, "content-type": "application/json" }, body: JSON.stringify({ name }) });
    const renamed = await call(renameRoute, project.id, json("  Renamed app "));
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id: project.id, name: "Renamed app" });
    expect((await getProject(fx.db, project.id))?.name).toBe("Renamed app");

    expect((await call(renameRoute, project.id, json(" "))).status).toBe(400);
    const stranger = await createTestUser(fx.db, "Stranger");
    const foreign = await call(renameRoute, project.id, { ...json("Mine now"), headers: { ...stranger.headers, "content-type": "application/json" } });
    expect(foreign.status).toBe(404);
    expect((await getProject(fx.db, project.id))?.name).toBe("Renamed app");
  });
});

describe("/api/projects/<id>/env", () => {
  it("lists the deployment's variables with their values masked and sets new ones through the deployment API", async () => {
    const project = await fx.newProject();
    const env = (init: RequestInit & { headers: Record<string, string> }) => call(init.method === "PUT" ? setEnvRoute : listEnvRoute, project.id, init, "/env");
    const put = (values: Record<string, string>) =>
      env({ method: "PUT", headers: { ...fx.owner.headers, "content-type": "application/json" }, body: JSON.stringify({ values }) });

    const unconnected = await env({ headers: fx.owner.headers });
    expect(unconnected.status).toBe(409);
    expect((await unconnected.json()).error.code).toBe("backend_not_connected");

    await connectManaged(project.id);
    const set = await put({ FEATURE_FLAG: "on", OPENAI_API_KEY: "sk-very-secret-value" });
    expect(set.status).toBe(200);
    const text = await set.text();
    expect(text).not.toContain("sk-very-secret-value");
    expect(JSON.parse(text).variables).toEqual(
      expect.arrayContaining([
        { name: "FEATURE_FLAG", valueLength: 2 },
        { name: "OPENAI_API_KEY", valueLength: 20 },
      ]),
    );
    const credentials = (await getCredentials(fx.db, project.id))!;
    const deployment = { deploymentUrl: credentials.deploymentUrl, token: credentials.adminKey };
    expect(await queryEnvVariable(deployment, "OPENAI_API_KEY")).toBe("sk-very-secret-value");

    await put({ FEATURE_FLAG: "off!" });
    expect(await queryEnvVariable(deployment, "FEATURE_FLAG")).toBe("off!");
    expect(await queryEnvVariable(deployment, "OPENAI_API_KEY")).toBe("sk-very-secret-value");
    const listed = await (await env({ headers: fx.owner.headers })).json();
    expect(listed.variables).toEqual(expect.arrayContaining([{ name: "FEATURE_FLAG", valueLength: 4 }]));

    for (const values of [{}, { "BAD-NAME": "x" }, { EMPTY: "" }] as Record<string, string>[]) expect((await put(values)).status).toBe(400);
    const stranger = await createTestUser(fx.db, "Stranger");
    expect((await env({ headers: stranger.headers })).status).toBe(404);
  });
});

describe("DELETE /api/projects/<id>", () => {
  it("is refused while a provisioning run is live, before anything is deleted", async () => {
    const project = await fx.newProject();
    await insertRunningOperation(fx.db, { projectId: project.id, kind: "enable", leaseOwner: "test", instance: await currentInstance(fx.db), leaseMs: 60_000, steps: {} });
    const refused = await call(deleteRoute, project.id, { method: "DELETE", headers: fx.owner.headers });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.code).toBe("in_progress");
    expect(await getProject(fx.db, project.id)).not.toBeNull();
    await fx.sandboxOf(project);
  });

  it("removes the project with its sandbox, every blob it owns and its managed backend project", async () => {
    const project = await fx.newProject();
    const other = await fx.newProject();
    await connectManaged(project.id);
    const { projectSlug } = (await getCredentials(fx.db, project.id))!;
    expect(await emulatorProjectCount(projectSlug)).toBe(1);

    const blobs = getBlobStore();
    const pathnames = (id: string) => [`${fx.owner.user.id}/${id}/assets/logo.png`, `bundles/${id}/abc1234/ios/index.js`, `screenshots/${id}-mobile.png`];
    for (const pathname of [...pathnames(project.id), ...pathnames(other.id)]) await blobs.put(pathname, "bytes", { access: "public", allowOverwrite: true });

    const stranger = await createTestUser(fx.db, "Stranger");
    expect((await call(deleteRoute, project.id, { method: "DELETE", headers: stranger.headers })).status).toBe(404);
    expect(await getProject(fx.db, project.id)).not.toBeNull();

    const deleted = await call(deleteRoute, project.id, { method: "DELETE", headers: fx.owner.headers });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ success: true });

    expect(await getProject(fx.db, project.id)).toBeNull();
    expect((await call(getRoute, project.id, { headers: fx.owner.headers })).status).toBe(404);
    expect(await getCredentials(fx.db, project.id)).toBeNull();
    expect(await emulatorProjectCount(projectSlug)).toBe(0);
    await expect(getSandboxProvider().connect(project.sandboxId!)).rejects.toBeInstanceOf(SandboxNotFoundError);
    for (const pathname of pathnames(project.id)) expect(await blobs.head(pathname)).toBeNull();
    // Another project's blobs, sandbox and row stay.
    for (const pathname of pathnames(other.id)) expect(await blobs.head(pathname)).not.toBeNull();
    expect(await listAllBlobs(blobs, `${fx.owner.user.id}/${other.id}/`)).toHaveLength(1);
    expect(await getProject(fx.db, other.id)).not.toBeNull();
    await fx.sandboxOf(other);
  });
});
