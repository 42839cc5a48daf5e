import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";
import { documentedOperations } from "./openapi";

/**
 * A user's own tooling against the emulator: `@convex-dev/platform`'s createManagementClient
 * (which reads CONVEX_PROVISION_HOST when it loads, hence a separate process) and
 * createDeploymentClient. The script calls every operation of both clients; the fixture checks
 * every exchange against the OpenAPI documents, and the operations it saw against the package's list.
 */
describe("@convex-dev/platform pointed at the emulator", () => {
  let emulator: TestEmulator;
  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(() => emulator.server.close());

  it("calls every operation of both clients: each answers its documented shape or a documented refusal", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(import.meta.dirname, "users-tools", "platform-client.mjs")], {
      env: { ...process.env, CONVEX_PROVISION_HOST: emulator.server.baseUrl, CONVEX_TEAM_TOKEN: emulator.team.teamScopedToken },
      timeout: 60_000,
    });
    const steps = Object.fromEntries(
      stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { step: string; status: number; data?: unknown; error?: unknown })
        .map((step) => [step.step, step]),
    );
    const ok = (step: string) => {
      expect(steps[step]).toMatchObject({ status: 200 });
      return steps[step].data as Record<string, unknown> & unknown[];
    };

    expect(ok("token_details")).toMatchObject({ type: "teamToken", teamId: expect.any(Number) });
    const created = ok("create_project");
    expect(created).toEqual({ projectId: created.id, id: expect.any(Number), slug: "users-own-app", deploymentName: expect.any(String), deploymentUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    expect(ok("list_projects")).toEqual({ items: [expect.objectContaining({ id: created.id, slug: "users-own-app" })], pagination: { hasMore: false, nextCursor: null } });
    expect(ok("get_project_by_slug")).toMatchObject({ id: created.id, name: "users-own-app", devDeploymentName: created.deploymentName });
    expect(ok("list_deployments")).toEqual([expect.objectContaining({ kind: "cloud", name: created.deploymentName, deploymentUrl: created.deploymentUrl })]);
    expect(ok("create_deploy_key")).toEqual({ deployKey: expect.stringMatching(new RegExp(`^dev:${created.deploymentName}\\|`)) });
    ok("update_default_environment_variables");
    expect(ok("list_default_environment_variables")).toEqual({ items: [{ name: "DEFAULT_A", value: "1", deploymentTypes: ["dev"] }], pagination: { hasMore: false, nextCursor: null } });
    ok("update_environment_variables");
    expect(ok("list_environment_variables")).toEqual({ environmentVariables: { FROM_SCRIPT: "yes" } });
    expect(ok("get_canonical_urls")).toEqual({ convexCloudUrl: created.deploymentUrl, convexSiteUrl: created.deploymentUrl });
    expect(ok("get_project")).toEqual(ok("get_project_by_slug"));
    const prod = ok("create_deployment");
    expect(prod).toMatchObject({ kind: "cloud", deploymentType: "prod", projectId: created.id });
    expect(ok("get_deployment")).toMatchObject({ name: created.deploymentName, deploymentType: "dev" });
    expect(ok("get_project_deployment")).toEqual(prod);
    expect(ok("get_project_deployment_by_slug")).toMatchObject({ name: created.deploymentName, deploymentType: "dev" });
    const devDeployment = ok("get_project_deployment_by_slug");
    expect(ok("list_team_deployments")).toEqual({ items: [devDeployment], pagination: { hasMore: true, nextCursor: String(devDeployment.id) } });
    expect(ok("list_deployment_classes")).toEqual({ items: [{ type: prod.class, available: true }] });
    expect(ok("list_deployment_regions")).toEqual({ items: [{ name: prod.region, displayName: expect.any(String), available: true }] });
    ok("delete_deployment");
    expect(steps.get_deployment_after_delete).toMatchObject({ status: 404, error: { code: "DeploymentNotFound" } });
    ok("pause_deployment");
    expect(steps.query_while_paused.error).toEqual({ message: expect.stringContaining("Cannot run functions while this deployment is paused.") });
    ok("unpause_deployment");
    expect(steps.query_after_unpause.error).toEqual({ message: expect.stringContaining("Could not find public function for 'messages:list'") });
    expect(ok("deployment_info")).toMatchObject({ deploymentType: "dev", projectId: created.id });

    // Every operation the installed package declares was exchanged, none answered a server fault,
    // and every refusal says it cannot apply to a local deployment.
    const exchanged = emulator.operations();
    expect(documentedOperations().filter((operation) => !exchanged.has(operation))).toEqual([]);
    expect([...exchanged].filter(([, statuses]) => statuses.some((status) => status >= 500))).toEqual([]);
    const refused = Object.values(steps).filter((step) => step.status >= 400 && !step.step.endsWith("_after_delete"));
    expect(refused.length).toBeGreaterThan(0);
    for (const step of refused) {
      expect(step, step.step).toMatchObject({ status: expect.toBeOneOf([400, 403]), error: { code: "NotAvailableOnLocalDeployment", message: expect.stringContaining("cannot apply to a local deployment: ") } });
    }

    ok("delete_project");
    expect(steps.get_project_by_slug_after_delete).toEqual({
      step: "get_project_by_slug_after_delete",
      status: 404,
      error: { code: "ProjectNotFound", message: "The requested project does not exist" },
    });
  });
});
