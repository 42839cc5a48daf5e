import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { createEmulatorTeam } from "@/lib/emulator";
import { getStore } from "@/lib/store";
import { emulatorClient } from "./helpers";

describe("emulated v1 management API", () => {
  const { call, json, identity, teamBearer, teamId, provision, close } = emulatorClient();
  afterAll(close);
  const get = (path: string, bearer = teamBearer) => call(path, { headers: { authorization: bearer } });
  const post = (path: string, bearer = teamBearer) => call(path, { method: "POST", headers: { authorization: bearer } });

  it("answers 401 AccessTokenInvalid in the upstream error shape without a valid Bearer token", async () => {
    for (const authorization of [undefined, "Bearer nope", `Basic ${identity.teamToken}`]) {
      const response = await call(`/v1/teams/1/create_project`, json({ projectName: "x" }, authorization));
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ code: "AccessTokenInvalid", message: expect.any(String) });
    }
  });

  it("token_details: a team token of the built-in team", async () => {
    const details = await (await get("/v1/token_details")).json();
    expect(details).toEqual({ type: "teamToken", id: expect.any(Number), teamId: expect.any(Number), name: expect.any(String), createTime: expect.any(Number) });
  });

  it("validates bodies strictly (400 BadJsonBody), and refuses deployment types it does not host", async () => {
    const path = `/v1/teams/${await teamId()}/create_project`;
    const cases = [json({}, teamBearer), json({ projectName: "x", unexpected: true }, teamBearer), { method: "POST", headers: { authorization: teamBearer }, body: "{not json" }];
    for (const init of cases) {
      const response = await call(path, init);
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("BadJsonBody");
    }
    const preview = await call(path, json({ projectName: "x", deploymentType: "preview" }, teamBearer));
    expect(await preview.json()).toEqual({ code: "DeploymentTypeNotSupported", message: expect.any(String) });
  });

  it("creates a project without a deployment when no type is given, and finds it by slug, id and in the list", async () => {
    const team = await teamId();
    const created = await (await call(`/v1/teams/${team}/create_project`, json({ projectName: "Bare Project" }, teamBearer))).json();
    expect(created).toEqual({ projectId: created.id, id: expect.any(Number), slug: "bare-project" });
    const bySlug = await (await get(`/v1/teams/${identity.teamSlug}/projects/bare-project`)).json();
    expect(bySlug).toMatchObject({ id: created.id, name: "Bare Project", slug: "bare-project", teamId: team, teamSlug: identity.teamSlug, devDeploymentName: null });
    expect(await (await get(`/v1/teams/${team}/projects/bare-project`)).json()).toEqual(bySlug);
    const listed = await (await get(`/v1/teams/${team}/projects?q=BARE`)).json();
    expect(listed).toEqual({ items: [bySlug], pagination: { hasMore: false, nextCursor: null } });
    expect(await (await get(`/v1/projects/${created.id}/list_deployments`)).json()).toEqual([]);
  });

  it("pages the project list with a cursor", async () => {
    const team = await teamId();
    for (const name of ["page-a", "page-b", "page-c"]) await call(`/v1/teams/${team}/create_project`, json({ projectName: name }, teamBearer));
    const first = await (await get(`/v1/teams/${team}/projects?q=page-&limit=2`)).json();
    expect(first.items.map((item: { slug: string }) => item.slug)).toEqual(["page-a", "page-b"]);
    expect(first.pagination.hasMore).toBe(true);
    const second = await (await get(`/v1/teams/${team}/projects?q=page-&limit=2&cursor=${first.pagination.nextCursor}`)).json();
    expect(second).toEqual({ items: [expect.objectContaining({ slug: "page-c" })], pagination: { hasMore: false, nextCursor: null } });
  });

  it("serves each deployment at the root of its own loopback port; lists, gets and creates deployments", async () => {
    const { created } = await provision("Roots");
    expect(created.deploymentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const [dev] = await (await get(`/v1/projects/${created.id}/list_deployments`)).json();
    expect(dev).toMatchObject({ kind: "cloud", name: created.deploymentName, deploymentType: "dev", projectId: created.id, deploymentUrl: created.deploymentUrl, isDefault: true });
    expect(await (await get(`/v1/deployments/${created.deploymentName}`)).json()).toEqual(dev);

    const again = await call(`/v1/projects/${created.id}/create_deployment`, json({ type: "dev" }, teamBearer));
    expect(again.status).toBe(400);
    expect((await again.json()).code).toBe("DeploymentReferenceAlreadyExists");
    const prod = await (await call(`/v1/projects/${created.id}/create_deployment`, json({ type: "prod" }, teamBearer))).json();
    expect(prod).toMatchObject({ deploymentType: "prod", deploymentUrl: expect.not.stringMatching(created.deploymentUrl) });
    expect(await (await get(`/v1/projects/${created.id}/list_deployments?deploymentType=prod`)).json()).toEqual([prod]);
  });

  it("several emulators in one process on one store: each serves its own deployments, the others keep their URLs", async () => {
    const second = emulatorClient();
    const { created, deployKey } = await provision("shared");
    const seen = await (await second.call(`/v1/deployments/${created.deploymentName}`, { headers: { authorization: teamBearer } })).json();
    expect(seen.deploymentUrl).toBe(created.deploymentUrl);
    const own = await second.provision("second-own");
    expect(own.created.deploymentUrl).not.toBe(created.deploymentUrl);
    await second.close();
    const stillServed = await fetch(`${created.deploymentUrl}/api/v1/list_environment_variables`, { headers: { authorization: `Convex ${deployKey}` } });
    expect(stillServed.status).toBe(200);
    await expect(fetch(`${own.created.deploymentUrl}/api/v1/list_environment_variables`)).rejects.toThrow();
  });

  it("create_deploy_key: a fresh dev:<deployment>|… key per call", async () => {
    const { created, deployKey } = await provision("Keys");
    expect(deployKey).toMatch(new RegExp(`^dev:${created.deploymentName}\\|[A-Za-z0-9_-]+$`));
    const second = await (await call(`/v1/deployments/${created.deploymentName}/create_deploy_key`, json({ name: "again" }, teamBearer))).json();
    expect(second.deployKey).not.toBe(deployKey);
  });

  it("keeps default environment variables per deployment type and seeds new deployments with them", async () => {
    const created = await (await call(`/v1/teams/${await teamId()}/create_project`, json({ projectName: "Defaults" }, teamBearer))).json();
    const update = (changes: unknown) => call(`/v1/projects/${created.id}/update_default_environment_variables`, json({ changes }, teamBearer));
    expect((await update([{ name: "SHARED", deploymentType: "dev", value: "1" }, { name: "SHARED", deploymentType: "prod", value: "1" }, { name: "GONE", deploymentType: "dev", value: "x" }])).status).toBe(200);
    expect((await update([{ name: "GONE", deploymentType: "dev", value: null }])).status).toBe(200);
    const listed = await (await get(`/v1/projects/${created.id}/list_default_environment_variables`)).json();
    expect(listed).toEqual({ items: [{ name: "SHARED", value: "1", deploymentTypes: ["dev", "prod"] }], pagination: { hasMore: false, nextCursor: null } });
    expect((await (await get(`/v1/projects/${created.id}/list_default_environment_variables?deploymentType=prod`)).json()).items).toEqual([
      { name: "SHARED", value: "1", deploymentTypes: ["prod"] },
    ]);
    const dev = await (await call(`/v1/projects/${created.id}/create_deployment`, json({ type: "dev" }, teamBearer))).json();
    const { deployKey } = await (await call(`/v1/deployments/${dev.name}/create_deploy_key`, json({ name: "read" }, teamBearer))).json();
    const vars = await fetch(`${dev.deploymentUrl}/api/v1/list_environment_variables`, { headers: { authorization: `Convex ${deployKey}` } });
    expect(await vars.json()).toEqual({ environmentVariables: { SHARED: "1" } });
  });

  it("answers unknown teams, projects and deployments with a clear 404 {code, message}", async () => {
    const other = await call("/v1/teams/999999/create_project", json({ projectName: "x" }, teamBearer));
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ code: "TeamNotFound", message: "Team '999999' not found." });
    expect(await (await get("/v1/teams/someone-else/projects/x")).json()).toMatchObject({ code: "TeamNotFound" });
    expect(await (await get(`/v1/teams/${identity.teamSlug}/projects/nope`)).json()).toEqual({ code: "ProjectNotFound", message: "The requested project does not exist" });
    expect(await (await get("/v1/projects/999999/list_deployments")).json()).toMatchObject({ code: "ProjectNotFound" });
    expect(await (await get("/v1/deployments/kindly-cow-378")).json()).toEqual({ code: "DeploymentNotFound", message: "The requested deployment kindly-cow-378 does not exist" });
  });

  it("counts quota per team and frees it on delete; other teams cannot see or delete the project", async () => {
    const { team, token } = await createEmulatorTeam(await getStore(), { slug: "quota-team", projectQuota: 1 });
    const bearer = `Bearer ${token}`;
    const first = await (await call(`/v1/teams/${team.id}/create_project`, json({ projectName: "one", deploymentType: "dev" }, bearer))).json();
    const refused = await call(`/v1/teams/${team.id}/create_project`, json({ projectName: "two" }, bearer));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ code: "ProjectQuotaReached", message: "Team 'quota-team' has reached its plan limit of 1 projects." });

    expect((await post(`/v1/projects/${first.id}/delete`)).status).toBe(404);
    expect((await get(`/v1/deployments/${first.deploymentName}`)).status).toBe(404);
    const deleted = await post(`/v1/projects/${first.id}/delete`, bearer);
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toBe("");
    const gone = await post(`/v1/projects/${first.id}/delete`, bearer);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ code: "ProjectNotFound", message: "The requested project does not exist" });
    // The deleted deployment's listener is closed.
    await expect(fetch(`${first.deploymentUrl}/api/v1/deployment_info`)).rejects.toThrow();
    expect((await call(`/v1/teams/${team.id}/create_project`, json({ projectName: "two" }, bearer))).status).toBe(200);
  });

  it("takes the default quota from EMULATOR_PROJECT_QUOTA", async () => {
    const config = parseConfig({ DATA_DIR: process.env.DATA_DIR, EMULATOR_PROJECT_QUOTA: "0" });
    const zero = emulatorClient({ config });
    const { team, token } = await createEmulatorTeam(await getStore(), { slug: "default-quota-team" });
    const response = await zero.call(`/v1/teams/${team.id}/create_project`, zero.json({ projectName: "x" }, `Bearer ${token}`));
    expect(await response.json()).toEqual({ code: "ProjectQuotaReached", message: expect.stringContaining("plan limit of 0 projects") });
    await zero.close();
  });

  it("answers 404 and 405 for unknown paths and methods; the legacy endpoints are gone", async () => {
    for (const path of ["/api/create_project", "/api/deployment/provision_and_authorize", "/v1/unknown"]) {
      expect((await call(path, json({}, teamBearer))).status).toBe(404);
    }
    expect((await get(`/v1/teams/${await teamId()}/create_project`)).status).toBe(405);
  });
});
