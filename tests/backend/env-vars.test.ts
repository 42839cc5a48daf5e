import { createLocalJWKSet, importPKCS8, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BackendAuthError,
  BackendNetworkError,
  BackendTimeoutError,
  formatAdminKey,
  initializeBackendAuth,
  provisionManagedProject,
  queryEnvVariable,
  queryEnvVariableWithRetries,
  setEnvVariables,
  setEnvVariablesWithRetries,
  type ProvisionedBackendProject,
} from "@/lib/backend";
import { createEmulatorTeam } from "@/lib/emulator";
import { getStore } from "@/lib/store";
import { countingFetch, startTestEmulator, type TestEmulator } from "./emulator-fixture";

describe("deployment env vars against the emulator over HTTP", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let other: ProvisionedBackendProject;

  beforeAll(async () => {
    emulator = await startTestEmulator();
    project = await provisionManagedProject({ ...emulator.team, projectName: "env app" }, emulator.management);
    other = await provisionManagedProject({ ...emulator.team, projectName: "other app" }, emulator.management);
  });
  afterAll(() => emulator.server.close());

  it("sets variables in one call and reads them back; unset reads as null", async () => {
    await setEnvVariables(project, { SITE_URL: "http://localhost:8081", MULTI: "a b\nc" });
    expect(await queryEnvVariable(project, "SITE_URL")).toBe("http://localhost:8081");
    expect(await queryEnvVariable(project, "MULTI")).toBe("a b\nc");
    expect(await queryEnvVariable(project, "MISSING")).toBeNull();
    expect(await queryEnvVariable(other, "SITE_URL")).toBeNull();
  });

  it("answers the backend's 400 for an invalid name, without retrying it", async () => {
    const counter = countingFetch();
    const failure = setEnvVariablesWithRetries(project, { "1BAD": "x" }, { fetch: counter.fetch, retryDelay: 0 });
    await expect(failure).rejects.toMatchObject({ upstreamStatus: 400, upstreamCode: "EnvironmentVariableNameInvalid" });
    expect(counter.calls()).toBe(1);
  });

  it("accepts the team token as the hosted deployment does, and refuses other deployments' keys and other teams", async () => {
    // The hosted deployment authenticates `project:<team>:<project>|<token>` as that access token.
    const wrapped = formatAdminKey({ teamSlug: project.teamSlug, projectSlug: project.projectSlug, token: emulator.team.teamScopedToken });
    await setEnvVariables({ deploymentUrl: project.deploymentUrl, token: wrapped }, { VIA_TEAM: "1" });
    expect(await queryEnvVariable({ deploymentUrl: project.deploymentUrl, token: emulator.team.teamScopedToken }, "VIA_TEAM")).toBe("1");

    const { token: foreignTeamToken } = await createEmulatorTeam(await getStore(), { slug: "env-foreign-team" });
    for (const token of [other.token, foreignTeamToken]) {
      const failure = setEnvVariables({ deploymentUrl: project.deploymentUrl, token }, { STOLEN: "1" });
      await expect(failure).rejects.toBeInstanceOf(BackendAuthError);
      await expect(failure).rejects.toMatchObject({ upstreamStatus: 401, upstreamCode: "BadDeployKey" });
    }
    expect(await queryEnvVariable(project, "STOLEN")).toBeNull();
  });

  it("retries injected 5xx (OptimisticConcurrencyControlFailure) and 429, then succeeds", async () => {
    const faults = emulator.server.emulator.faults;
    faults.add({ path: "update_environment_variables", status: 503, code: "OptimisticConcurrencyControlFailure", times: 2 });
    const counter = countingFetch();
    await setEnvVariablesWithRetries(project, { RETRIED: "yes" }, { fetch: counter.fetch, retryDelay: 1 });
    expect(counter.calls()).toBe(3);

    faults.add({ path: "list_environment_variables", status: 429, code: "RateLimited" });
    expect(await queryEnvVariableWithRetries(project, "RETRIED", { fetch: counter.fetch, retryDelay: 1 })).toBe("yes");
    expect(counter.calls()).toBe(5);
  });

  it("gives up after maxRetries attempts and rethrows the last error", async () => {
    emulator.server.emulator.faults.add({ path: "list_environment_variables", status: 500, times: 4 });
    const counter = countingFetch();
    const failure = queryEnvVariableWithRetries(project, "RETRIED", { fetch: counter.fetch, maxRetries: 3, retryDelay: 1 });
    await expect(failure).rejects.toMatchObject({ upstreamStatus: 500, upstreamCode: "InternalServerError", retryable: true });
    expect(counter.calls()).toBe(3);
    emulator.server.emulator.faults.clear();
  });

  it("times out a hanging deployment, and retries a timeout", async () => {
    const faults = emulator.server.emulator.faults;
    faults.add({ path: "list_environment_variables", hang: true });
    await expect(queryEnvVariable(project, "RETRIED", { timeoutMs: 150 })).rejects.toBeInstanceOf(BackendTimeoutError);

    faults.add({ path: "list_environment_variables", hang: true });
    const counter = countingFetch();
    // Long enough for the answering second attempt on a loaded machine: only the hang may time out.
    expect(await queryEnvVariableWithRetries(project, "RETRIED", { fetch: counter.fetch, timeoutMs: 3_000, retryDelay: 1 })).toBe("yes");
    expect(counter.calls()).toBe(2);
  });

  it("reports an unreachable deployment as a retryable network error", async () => {
    const closed = await startTestEmulator();
    const url = new URL(closed.server.baseUrl).origin;
    await closed.server.close();
    const failure = await queryEnvVariable({ deploymentUrl: url, token: project.token }, "SITE_URL").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BackendNetworkError);
    expect((failure as BackendNetworkError).retryable).toBe(true);
    expect((failure as BackendNetworkError).message).toContain("ECONNREFUSED");
  });

  it("initializes auth: sets only the missing variables, with a working key pair", async () => {
    const fresh = await provisionManagedProject({ ...emulator.team, projectName: "auth app" }, emulator.management);
    await setEnvVariables(fresh, { SITE_URL: "https://kept.example" });
    expect(await initializeBackendAuth(fresh, "http://localhost:8081", { retryDelay: 1 })).toEqual(["JWKS", "JWT_PRIVATE_KEY"]);
    expect(await queryEnvVariable(fresh, "SITE_URL")).toBe("https://kept.example");

    const privateKey = (await queryEnvVariable(fresh, "JWT_PRIVATE_KEY"))!;
    const jwks = JSON.parse((await queryEnvVariable(fresh, "JWKS"))!);
    const token = await new SignJWT({}).setProtectedHeader({ alg: "RS256" }).setSubject("user").sign(await importPKCS8(privateKey, "RS256"));
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks));
    expect(payload.sub).toBe("user");

    expect(await initializeBackendAuth(fresh, "http://localhost:8081")).toEqual([]);
    expect(await queryEnvVariable(fresh, "JWT_PRIVATE_KEY")).toBe(privateKey);

    const empty = await provisionManagedProject({ ...emulator.team, projectName: "auth app 2" }, emulator.management);
    expect(await initializeBackendAuth(empty, "http://localhost:8081")).toEqual(["SITE_URL", "JWKS", "JWT_PRIVATE_KEY"]);
    expect(await queryEnvVariable(empty, "SITE_URL")).toBe("http://localhost:8081");
  });
});
