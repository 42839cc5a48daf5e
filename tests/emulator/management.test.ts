import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { createEmulatorTeam } from "@/lib/emulator";
import { getStore } from "@/lib/store";
import { BASE, emulatorClient } from "./helpers";

describe("emulated management API", () => {
  const { call, json, identity, teamBearer, provision } = emulatorClient();

  it("answers 401 AccessTokenInvalid in the upstream error shape without a valid Bearer token", async () => {
    for (const authorization of [undefined, "Bearer nope", `Basic ${identity.teamToken}`]) {
      const response = await call("/api/create_project", json({ team: identity.teamSlug, projectName: "x" }, authorization));
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ code: "AccessTokenInvalid", message: expect.any(String) });
    }
  });

  it("validates bodies strictly (400 BadJsonBody)", async () => {
    const cases = [
      json({ team: identity.teamSlug }, teamBearer),
      json({ team: identity.teamSlug, projectName: "x", unexpected: true }, teamBearer),
      json({ team: identity.teamSlug, projectName: "x", deploymentType: "preview" }, teamBearer),
      { method: "POST", headers: { authorization: teamBearer }, body: "{not json" },
    ];
    for (const init of cases) {
      const response = await call("/api/create_project", init);
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("BadJsonBody");
    }
  });

  it("creates a project without a deployment when no type is given", async () => {
    const response = await call("/api/create_project", json({ team: identity.teamSlug, projectName: "Bare" }, teamBearer));
    const body = await response.json();
    expect(body).toEqual({ projectSlug: "bare", projectId: expect.any(Number), teamSlug: identity.teamSlug, teamId: expect.any(Number), projectsRemaining: expect.any(Number) });
  });

  it("serves deployments below the mount; provision_and_authorize reuses the dev deployment and mints a new key", async () => {
    const { created, deployment } = await provision("reuse");
    expect(deployment.deploymentName).toBe(created.deploymentName);
    expect(deployment.url).toBe(`${BASE}/deployments/${created.deploymentName}`);
    const again = await (
      await call("/api/deployment/provision_and_authorize", json({ teamSlug: identity.teamSlug, projectSlug: created.projectSlug, deploymentType: "dev" }, teamBearer))
    ).json();
    expect(again.deploymentName).toBe(created.deploymentName);
    expect(again.adminKey).not.toBe(deployment.adminKey);

    const prod = await (
      await call("/api/deployment/provision_and_authorize", json({ teamSlug: identity.teamSlug, projectSlug: created.projectSlug, deploymentType: "prod" }, teamBearer))
    ).json();
    expect(prod).toMatchObject({ deploymentType: "prod", deploymentName: expect.not.stringMatching(created.deploymentName) });
  });

  it("refuses null slugs, unknown projects and other teams", async () => {
    const nullSlugs = await call("/api/deployment/provision_and_authorize", json({ teamSlug: null, projectSlug: null, deploymentType: "dev" }, teamBearer));
    expect(nullSlugs.status).toBe(400);
    const missing = await call("/api/deployment/provision_and_authorize", json({ teamSlug: identity.teamSlug, projectSlug: "nope", deploymentType: "dev" }, teamBearer));
    expect(await missing.json()).toEqual({ code: "ProjectNotFound", message: expect.any(String) });
    const other = await call("/api/create_project", json({ team: "someone-else", projectName: "x" }, teamBearer));
    expect(other.status).toBe(404);
    expect((await other.json()).code).toBe("TeamNotFound");
  });

  it("counts quota per team and frees it on delete", async () => {
    const { team, token } = await createEmulatorTeam(await getStore(), { slug: "quota-team", projectQuota: 1 });
    const bearer = `Bearer ${token}`;
    const first = await (await call("/api/create_project", json({ team: team.slug, projectName: "one" }, bearer))).json();
    expect(first.projectsRemaining).toBe(0);
    const refused = await call("/api/create_project", json({ team: team.slug, projectName: "two" }, bearer));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ code: "ProjectQuotaReached", message: "Team 'quota-team' has reached its plan limit of 1 projects." });

    // Another team's token cannot delete it; the owner can, once.
    expect((await call(`/v1/projects/${first.projectId}/delete`, { method: "POST", headers: { authorization: teamBearer } })).status).toBe(404);
    const deleted = await call(`/v1/projects/${first.projectId}/delete`, { method: "POST", headers: { authorization: bearer } });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toBe("");
    expect((await call(`/v1/projects/${first.projectId}/delete`, { method: "POST", headers: { authorization: bearer } })).status).toBe(404);
    expect((await call("/api/create_project", json({ team: team.slug, projectName: "two" }, bearer))).status).toBe(200);
  });

  it("takes the default quota from EMULATOR_PROJECT_QUOTA", async () => {
    const config = parseConfig({ DATA_DIR: process.env.DATA_DIR, EMULATOR_PROJECT_QUOTA: "0" });
    const { call: callZero, json: jsonZero } = emulatorClient({ config });
    const { token } = await createEmulatorTeam(await getStore(), { slug: "default-quota-team" });
    const response = await callZero("/api/create_project", jsonZero({ team: "default-quota-team", projectName: "x" }, `Bearer ${token}`));
    expect(await response.json()).toEqual({ code: "ProjectQuotaReached", message: expect.stringContaining("plan limit of 0 projects") });
  });

  it("answers 404 and 405 for unknown paths and methods", async () => {
    expect((await call("/api/unknown", { method: "POST" })).status).toBe(404);
    expect((await call("/api/create_project")).status).toBe(405);
  });
});
