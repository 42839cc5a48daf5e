import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BackendAuthError,
  BackendNotFoundError,
  BackendSsoRequiredError,
  ProjectQuotaReachedError,
  createManagedProject,
  deleteManagedProject,
  parseAdminKey,
  provisionManagedDeployment,
  provisionManagedProject,
  queryEnvVariable,
  type CreateProjectResponse,
} from "@/lib/backend";
import { createEmulatorTeam } from "@/lib/emulator";
import { getStore } from "@/lib/store";
import { startTestEmulator, type TestEmulator } from "./emulator-fixture";

const ADMIN_KEY_FORMAT = /^project:[a-z0-9-]+:[a-z0-9-]+\|[A-Za-z0-9_-]{20,}$/;

describe("managed provisioning against the emulator over HTTP", () => {
  let emulator: TestEmulator;

  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(() => emulator.server.close());

  it("creates a project: the spec's CreateProjectResponse, without an admin key", async () => {
    const created = await createManagedProject({ ...emulator.team, projectName: "My App (v2)!" }, emulator.management);
    expect(created).toEqual({
      projectSlug: "my-app-v2",
      projectId: expect.any(Number),
      teamSlug: emulator.team.teamSlug,
      deploymentName: expect.stringMatching(/^[a-z]+-[a-z]+-\d{3}$/),
      prodUrl: `${emulator.server.baseUrl}/deployments/${created.deploymentName}`,
      adminKey: undefined,
      projectsRemaining: expect.any(Number),
    });
    const again = await createManagedProject({ ...emulator.team, projectName: "My App (v2)!" }, emulator.management);
    expect(again.projectSlug).not.toBe(created.projectSlug);
    expect(again.projectsRemaining).toBe(created.projectsRemaining - 1);
  });

  it("provisions the project's dev deployment with a key scoped to it", async () => {
    const created = await createManagedProject({ ...emulator.team, projectName: "deploy me" }, emulator.management);
    const deployment = await provisionManagedDeployment(
      { ...emulator.team, projectSlug: created.projectSlug, deploymentType: "dev" },
      emulator.management,
    );
    expect(deployment).toEqual({
      deploymentName: created.deploymentName,
      url: created.prodUrl,
      adminKey: expect.stringMatching(ADMIN_KEY_FORMAT),
      deploymentType: "dev",
    });
    expect(parseAdminKey(deployment.adminKey)).toMatchObject({ teamSlug: emulator.team.teamSlug, projectSlug: created.projectSlug });
  });

  it("runs the full workflow with 20 ms latency: admin key in spec format, free of the team token", async () => {
    emulator.server.emulator.faults.add({ latencyMs: 20, times: 2 });
    const recorded: CreateProjectResponse[] = [];
    const started = performance.now();
    const project = await provisionManagedProject(
      { ...emulator.team, projectName: "latency app" },
      { ...emulator.management, onProjectCreated: (created) => void recorded.push(created) },
    );
    // Both calls waited for the injected latency (a lower bound, not a speed assumption).
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
    expect(project).toEqual({
      token: expect.stringMatching(ADMIN_KEY_FORMAT),
      deploymentName: recorded[0].deploymentName,
      deploymentUrl: recorded[0].prodUrl,
      projectSlug: "latency-app",
      teamSlug: emulator.team.teamSlug,
      projectId: recorded[0].projectId,
      projectsRemaining: recorded[0].projectsRemaining,
    });
    expect(project.token).not.toContain(emulator.team.teamScopedToken);
    expect(parseAdminKey(project.token)).toMatchObject({ teamSlug: project.teamSlug, projectSlug: project.projectSlug });
  });

  it("deletes a project with its deployments; a second delete reports it gone", async () => {
    const project = await provisionManagedProject({ ...emulator.team, projectName: "short lived" }, emulator.management);
    expect(await queryEnvVariable(project, "ANY")).toBeNull();
    expect(await deleteManagedProject({ teamScopedToken: emulator.team.teamScopedToken, projectId: project.projectId }, emulator.management)).toBe(true);
    await expect(queryEnvVariable(project, "ANY")).rejects.toBeInstanceOf(BackendNotFoundError);
    expect(await deleteManagedProject({ teamScopedToken: emulator.team.teamScopedToken, projectId: project.projectId }, emulator.management)).toBe(false);
  });

  it("reports the quota as ProjectQuotaReached, and deleting a project frees it", async () => {
    const { team, token } = await createEmulatorTeam(await getStore(), { slug: "small-team", projectQuota: 2 });
    const input = { teamScopedToken: token, teamSlug: team.slug };
    const first = await provisionManagedProject({ ...input, projectName: "one" }, emulator.management);
    expect(first.projectsRemaining).toBe(1);
    expect(first.warningMessage).toBe("You have 1 project remaining on this team.");
    const second = await createManagedProject({ ...input, projectName: "two" }, emulator.management);
    expect(second.projectsRemaining).toBe(0);

    const failure = await provisionManagedProject({ ...input, projectName: "three" }, emulator.management).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProjectQuotaReachedError);
    const quota = failure as ProjectQuotaReachedError;
    expect(quota.message).toContain("ProjectQuotaReached");
    expect(quota.message).toMatch(/plan's project limit/);
    expect(quota).toMatchObject({ status: 409, code: "project_quota_reached", upstreamStatus: 400, upstreamCode: "ProjectQuotaReached" });

    await deleteManagedProject({ teamScopedToken: token, projectId: first.projectId }, emulator.management);
    const third = await createManagedProject({ ...input, projectName: "three" }, emulator.management);
    expect(third.projectsRemaining).toBe(0);
  });

  it("rejects invalid tokens, deployment keys as team tokens, and other teams", async () => {
    const bad = createManagedProject({ teamScopedToken: "not-a-token", teamSlug: emulator.team.teamSlug, projectName: "x" }, emulator.management);
    await expect(bad).rejects.toBeInstanceOf(BackendAuthError);
    await expect(bad).rejects.toMatchObject({ upstreamStatus: 401, upstreamCode: "AccessTokenInvalid" });

    const project = await provisionManagedProject({ ...emulator.team, projectName: "key owner" }, emulator.management);
    const withKey = createManagedProject({ teamScopedToken: project.token, teamSlug: project.teamSlug, projectName: "x" }, emulator.management);
    await expect(withKey).rejects.toBeInstanceOf(BackendAuthError);

    const foreign = createManagedProject({ ...emulator.team, teamSlug: "small-team", projectName: "x" }, emulator.management);
    await expect(foreign).rejects.toMatchObject({ upstreamStatus: 404, upstreamCode: "TeamNotFound" });
    const foreignDelete = await deleteManagedProject({ teamScopedToken: (await createEmulatorTeam(await getStore(), { slug: "other" })).token, projectId: project.projectId }, emulator.management);
    expect(foreignDelete).toBe(false);
  });

  it("gives SSORequired its own error", async () => {
    emulator.server.emulator.faults.add({ path: "create_project", status: 403, code: "SSORequired", message: "SSO required" });
    const failure = createManagedProject({ ...emulator.team, projectName: "sso" }, emulator.management);
    await expect(failure).rejects.toBeInstanceOf(BackendSsoRequiredError);
    await expect(failure).rejects.toThrow(/Single Sign-On/);
  });
});
