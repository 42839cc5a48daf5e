import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BackendApiError,
  createManagedProject,
  exchangeOAuthCode,
  generateAuthKeys,
  initializeBackendAuth,
  provisionManagedProject,
  queryEnvVariable,
  queryEnvVariableWithRetries,
  setEnvVariables,
  setEnvVariablesWithRetries,
  type ProvisionedBackendProject,
} from "@/lib/backend";
import { startTestEmulator, type TestEmulator } from "./emulator-fixture";

/**
 * Runs failing calls with debug logging on and checks that no secret used in them shows up in
 * any log line, error message, error name/code or serialized error.
 */
describe("secrets stay out of logs and errors", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  const lines: string[] = [];
  const failures: unknown[] = [];
  const previousLevel = process.env.LOG_LEVEL;
  // msw only intercepts the hosted address; the emulator is reached over real loopback HTTP.
  const hosted = setupServer();

  beforeAll(async () => {
    process.env.LOG_LEVEL = "debug";
    for (const method of ["log", "error", "warn", "info"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
    hosted.listen({ onUnhandledRequest: "bypass" });
    emulator = await startTestEmulator();
    project = await provisionManagedProject({ ...emulator.team, projectName: "secret app" }, emulator.management);
  });
  afterEach(() => hosted.resetHandlers());
  afterAll(async () => {
    hosted.close();
    vi.restoreAllMocks();
    process.env.LOG_LEVEL = previousLevel;
    await emulator.server.close();
  });

  const capture = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => new Error("expected a failure"),
      (failure: unknown) => failure,
    );
    failures.push(error);
  };

  it("collects failures of every kind", async () => {
    const faults = emulator.server.emulator.faults;
    const { identity } = emulator.server.emulator;
    const wrongToken = "wrong-team-token-3141592653";
    const keys = await generateAuthKeys();

    await capture(createManagedProject({ teamScopedToken: wrongToken, teamSlug: "local-team", projectName: "x" }, emulator.management));
    await capture(setEnvVariables({ deploymentUrl: project.deploymentUrl, token: wrongToken }, { JWT_PRIVATE_KEY: keys.JWT_PRIVATE_KEY }));
    faults.add({ path: "update_environment_variables", status: 503, code: "OptimisticConcurrencyControlFailure", times: 3 });
    await capture(setEnvVariablesWithRetries(project, { JWT_PRIVATE_KEY: keys.JWT_PRIVATE_KEY }, { retryDelay: 1 }));
    faults.add({ path: "list_environment_variables", hang: true });
    await capture(queryEnvVariableWithRetries(project, "JWKS", { timeoutMs: 100, maxRetries: 1 }));
    // Three parallel queries, three attempts each.
    faults.add({ path: "list_environment_variables", status: 500, times: 9 });
    await capture(initializeBackendAuth(project, "http://localhost:8081", { retryDelay: 1 }));
    await capture(exchangeOAuthCode({ code: "bogus-code-value-271828", clientId: identity.oauthClientId, clientSecret: identity.oauthClientSecret, redirectUri: "http://127.0.0.1/cb" }, emulator.management));
    await capture(exchangeOAuthCode({ code: "bogus-code-value-271828", clientId: identity.oauthClientId, clientSecret: "wrong-client-secret-161803", redirectUri: "http://127.0.0.1/cb" }, emulator.management));

    // A hostile hosted API that echoes everything it receives.
    hosted.use(
      http.all("https://api.convex.dev/*", async ({ request }) =>
        HttpResponse.json({ code: `Echo ${request.headers.get("authorization")}`, message: await request.text() }, { status: 400 }),
      ),
      http.all("https://echo-deployment.convex.cloud/*", async ({ request }) =>
        HttpResponse.json({ code: "Echo", message: `${request.headers.get("authorization")} ${request.url}` }, { status: 400 }),
      ),
    );
    await capture(createManagedProject({ teamScopedToken: emulator.team.teamScopedToken, teamSlug: "local-team", projectName: "x" }));
    await capture(exchangeOAuthCode({ code: "bogus-code-value-271828", clientId: "c", clientSecret: identity.oauthClientSecret, redirectUri: "https://a.example/cb" }));
    await capture(queryEnvVariable({ deploymentUrl: "https://echo-deployment.convex.cloud", token: project.token }, "JWKS"));

    const secrets = [
      emulator.team.teamScopedToken,
      wrongToken,
      project.token,
      project.token.split("|")[1],
      identity.oauthClientSecret,
      "wrong-client-secret-161803",
      "bogus-code-value-271828",
      keys.JWT_PRIVATE_KEY,
      keys.JWT_PRIVATE_KEY.split(" ")[4],
    ];
    expect(failures).toHaveLength(10);
    for (const failure of failures) expect(failure).toBeInstanceOf(BackendApiError);
    expect(lines.length).toBeGreaterThan(5);
    const texts = [
      ...lines,
      ...failures.map((failure) => {
        const error = failure as Error & { code?: string; upstreamCode?: string };
        return [error.name, error.message, error.code, error.upstreamCode, JSON.stringify(error)].join("\n");
      }),
    ];
    for (const secret of secrets) {
      for (const text of texts) expect(text.includes(secret), `secret leaked in: ${text.slice(0, 200)}`).toBe(false);
    }
  });
});
