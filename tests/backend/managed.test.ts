import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BackendAuthError,
  BackendNotFoundError,
  BackendSsoRequiredError,
  ProjectQuotaReachedError,
  backendProjectNameFor,
  createManagedProject,
  deleteManagedProject,
  findBackendProjectBySlug,
  provisionManagedDeployment,
  provisionManagedProject,
  queryEnvVariable,
  type CreateProjectResponse,
} from "@/lib/backend";
import { createEmulatorTeam } from "@/lib/emulator";
import { getStore } from "@/lib/store";
import { countingFetch, startTestEmulator, type TestEmulator } from "./emulator-fixture";

/** A v1 deploy key of one dev deployment. */
const deployKeyOf = (deploymentName: string) => new RegExp(`^dev:${deploymentName}\\|[A-Za-z0-9_-]{20,}$`);
const LOOPBACK_URL = /^http:\/\/127\.0\.0\.1:\d+$/;

describe("managed provisioning against the emulator over HTTP (v1 Platform API)", () => {
  let emulator: TestEmulator;

  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(() => emulator.server.close());

  it("creates a project: the spec's CreateProjectResponse from the v1 answer", async () => {
    const created = await createManagedProject({ ...emulator.team, projectName: "My App (v2)!", deploymentType: "dev" }, emulator.management);
    expect(created).toEqual({
      projectSlug: "my-app-v2",
      projectId: expect.any(Number),
      teamSlug: emulator.team.teamSlug,
      deploymentName: expect.stringMatching(/^[a-z]+-[a-z]+-\d{3}$/),
      prodUrl: expect.stringMatching(LOOPBACK_URL),
    });
    const again = await createManagedProject({ ...emulator.team, projectName: "My App (v2)!" }, emulator.management);
    expect(again).toEqual({ projectSlug: expect.not.stringMatching(/^my-app-v2$/), projectId: expect.any(Number), teamSlug: emulator.team.teamSlug });
  });

  it("provisions a project's deployment (created when missing) with a fresh key scoped to it", async () => {
    const created = await createManagedProject({ ...emulator.team, projectName: "deploy me" }, emulator.management);
    const deployment = await provisionManagedDeployment({ ...emulator.team, projectSlug: created.projectSlug, deploymentType: "dev" }, emulator.management);
    expect(deployment).toEqual({
      deploymentName: expect.any(String),
      url: expect.stringMatching(LOOPBACK_URL),
      adminKey: expect.stringMatching(deployKeyOf(deployment.deploymentName)),
      deploymentType: "dev",
    });
    const again = await provisionManagedDeployment({ ...emulator.team, projectSlug: created.projectSlug }, emulator.management);
    expect(again).toMatchObject({ deploymentName: deployment.deploymentName, url: deployment.url });
    expect(again.adminKey).not.toBe(deployment.adminKey);
    const missing = provisionManagedDeployment({ ...emulator.team, projectSlug: "no-such-project" }, emulator.management);
    await expect(missing).rejects.toMatchObject({ upstreamStatus: 404, upstreamCode: "ProjectNotFound" });
  });

  it("runs the full workflow with 20 ms latency: a deploy key of the dev deployment, free of the team token", async () => {
    emulator.server.emulator.faults.add({ latencyMs: 20, times: 2 });
    const recorded: CreateProjectResponse[] = [];
    const started = performance.now();
    const project = await provisionManagedProject(
      { ...emulator.team, projectName: "latency app" },
      { ...emulator.management, onProjectCreated: (created) => void recorded.push(created) },
    );
    // Two calls waited for the injected latency (a lower bound, not a speed assumption).
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
    expect(project).toEqual({
      token: expect.stringMatching(deployKeyOf(project.deploymentName)),
      deploymentName: recorded[0].deploymentName,
      deploymentUrl: recorded[0].prodUrl,
      projectSlug: "latency-app",
      teamSlug: emulator.team.teamSlug,
      projectId: recorded[0].projectId,
    });
    expect(project.token).not.toContain(emulator.team.teamScopedToken);
    expect(await queryEnvVariable(project, "ANY")).toBeNull();
  });

  it("adopts the project a slug-shaped name already names: no second project, a fresh key", async () => {
    const projectName = backendProjectNameFor("6f1c2a4e-0000-4000-8000-00000000abcd");
    const first = await provisionManagedProject({ ...emulator.team, projectName }, emulator.management);
    expect(first.projectSlug).toBe(projectName);
    const found = await findBackendProjectBySlug({ bearerToken: emulator.team.teamScopedToken, team: emulator.team.teamSlug, projectSlug: projectName }, emulator.management);
    expect(found).toEqual({ projectId: first.projectId, projectSlug: projectName, projectName, teamSlug: emulator.team.teamSlug });

    const recorded: CreateProjectResponse[] = [];
    const second = await provisionManagedProject({ ...emulator.team, projectName }, { ...emulator.management, onProjectCreated: (created) => void recorded.push(created) });
    expect(recorded).toEqual([{ projectSlug: projectName, projectId: first.projectId, teamSlug: emulator.team.teamSlug }]);
    expect(second).toMatchObject({ projectId: first.projectId, deploymentName: first.deploymentName, deploymentUrl: first.deploymentUrl });
    expect(second.token).not.toBe(first.token);
    expect(await findBackendProjectBySlug({ bearerToken: emulator.team.teamScopedToken, team: emulator.team.teamSlug, projectSlug: "nothing-here" }, emulator.management)).toBeNull();
  });

  it("retries transient 5xx, 429 and network failures on create and provision with backoff, creating one project", async () => {
    const projectName = backendProjectNameFor("retry-me");
    const faults = emulator.server.emulator.faults;
    faults.add({ path: "create_project", status: 503, code: "OptimisticConcurrencyControlFailure" });
    faults.add({ path: "create_deploy_key", status: 429, code: "TooManyRequests" });
    const counting = countingFetch();
    const project = await provisionManagedProject({ ...emulator.team, projectName }, { ...emulator.management, fetch: counting.fetch, retryDelay: 1 });
    // token_details, lookup, create (503), lookup, create, create_deploy_key (429), create_deploy_key.
    expect(counting.calls()).toBe(7);
    expect((await findBackendProjectBySlug({ bearerToken: emulator.team.teamScopedToken, team: emulator.team.teamSlug, projectSlug: projectName }, emulator.management))?.projectId).toBe(project.projectId);

    faults.add({ path: "create_project", status: 500, times: 2 });
    const failure = provisionManagedProject({ ...emulator.team, projectName: backendProjectNameFor("gives-up") }, { ...emulator.management, maxRetries: 2, retryDelay: 1 });
    await expect(failure).rejects.toMatchObject({ upstreamStatus: 500 });
  });

  it("deletes a project with its deployments; a second delete reports it gone", async () => {
    const project = await provisionManagedProject({ ...emulator.team, projectName: "short lived" }, emulator.management);
    expect(await deleteManagedProject({ teamScopedToken: emulator.team.teamScopedToken, projectId: project.projectId }, emulator.management)).toBe(true);
    // The deployment's listener is gone with it.
    await expect(queryEnvVariable(project, "ANY")).rejects.toMatchObject({ code: "backend_unreachable" });
    expect(await deleteManagedProject({ teamScopedToken: emulator.team.teamScopedToken, projectId: project.projectId }, emulator.management)).toBe(false);
  });

  it("reports the quota as ProjectQuotaReached, and deleting a project frees it", async () => {
    const { team, token } = await createEmulatorTeam(await getStore(), { slug: "small-team", projectQuota: 2 });
    const input = { teamScopedToken: token, teamSlug: team.slug };
    const first = await provisionManagedProject({ ...input, projectName: "one" }, emulator.management);
    await createManagedProject({ ...input, projectName: "two" }, emulator.management);

    const failure = await provisionManagedProject({ ...input, projectName: "three" }, emulator.management).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProjectQuotaReachedError);
    const quota = failure as ProjectQuotaReachedError;
    expect(quota.message).toContain("ProjectQuotaReached");
    expect(quota.message).toMatch(/plan's project limit/);
    expect(quota).toMatchObject({ status: 409, code: "project_quota_reached", upstreamStatus: 400, upstreamCode: "ProjectQuotaReached" });

    await deleteManagedProject({ teamScopedToken: token, projectId: first.projectId }, emulator.management);
    expect(await createManagedProject({ ...input, projectName: "three" }, emulator.management)).toMatchObject({ projectSlug: "three" });
  });

  it("rejects invalid tokens, deploy keys as team tokens, and team slugs the token does not belong to", async () => {
    const bad = createManagedProject({ teamScopedToken: "not-a-token", teamSlug: emulator.team.teamSlug, projectName: "x" }, emulator.management);
    await expect(bad).rejects.toBeInstanceOf(BackendAuthError);
    await expect(bad).rejects.toMatchObject({ upstreamStatus: 401, upstreamCode: "AccessTokenInvalid" });

    const project = await provisionManagedProject({ ...emulator.team, projectName: "key owner" }, emulator.management);
    const withKey = createManagedProject({ teamScopedToken: project.token, teamSlug: project.teamSlug, projectName: "x" }, emulator.management);
    await expect(withKey).rejects.toBeInstanceOf(BackendAuthError);

    const foreign = provisionManagedProject({ ...emulator.team, teamSlug: "small-team", projectName: "misfiled" }, emulator.management);
    await expect(foreign).rejects.toBeInstanceOf(BackendNotFoundError);
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
