import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BackendApiError,
  BackendAuthError,
  BackendSsoRequiredError,
  ProjectQuotaReachedError,
  createBackendProject,
  createManagedProject,
  deleteManagedProject,
  exchangeOAuthCode,
  getOAuthAuthorizeUrl,
  provisionBackendProject,
  provisionManagedDeployment,
  provisionManagedProject,
  queryEnvVariable,
  setEnvVariables,
} from "@/lib/backend";

/** Pins the exact requests sent to the hosted API (method, URL, headers, body), without the network. */

const API = "https://api.convex.dev";
const TEAM_TOKEN = "team-scoped-token-0123456789";
const DEPLOYMENT_URL = "https://happy-animal-123.convex.cloud";
const ADMIN_KEY = "project:acme:my-app|deployment-scoped-secret";

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

const seen: Seen[] = [];
const server = setupServer();

async function record(request: Request): Promise<void> {
  const headers = Object.fromEntries(request.headers);
  seen.push({ method: request.method, url: request.url, headers, body: await request.clone().text() });
}

const createProjectAnswer = { projectSlug: "my-app", projectId: 42, teamSlug: "acme", teamId: 7, deploymentName: "happy-animal-123", prodUrl: DEPLOYMENT_URL, projectsRemaining: 5 };
const provisionAnswer = { deploymentName: "happy-animal-123", url: DEPLOYMENT_URL, adminKey: ADMIN_KEY, deploymentType: "dev" };

function answer(path: string, body: unknown, status = 200) {
  return http.post(path, async ({ request }) => {
    await record(request);
    return body === null ? new HttpResponse(null, { status }) : HttpResponse.json(body as object, { status });
  });
}

beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => {
  server.resetHandlers();
  seen.length = 0;
});
afterAll(() => server.close());

describe("requests to the hosted management API", () => {
  it("create_project: POST JSON with the team token as Bearer; tolerates a missing adminKey", async () => {
    server.use(answer(`${API}/api/create_project`, createProjectAnswer));
    const created = await createManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "My App" });
    expect(seen).toEqual([
      {
        method: "POST",
        url: `${API}/api/create_project`,
        headers: expect.objectContaining({ authorization: `Bearer ${TEAM_TOKEN}`, "content-type": "application/json" }),
        body: JSON.stringify({ team: "acme", projectName: "My App", deploymentType: "dev" }),
      },
    ]);
    expect(created).toEqual({ projectSlug: "my-app", projectId: 42, teamSlug: "acme", deploymentName: "happy-animal-123", prodUrl: DEPLOYMENT_URL, adminKey: undefined, projectsRemaining: 5 });
  });

  it("provision_and_authorize: POST JSON with both slugs and the deployment type", async () => {
    server.use(answer(`${API}/api/deployment/provision_and_authorize`, provisionAnswer));
    const deployment = await provisionManagedDeployment({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectSlug: "my-app", deploymentType: "prod" });
    expect(seen[0]).toMatchObject({
      method: "POST",
      url: `${API}/api/deployment/provision_and_authorize`,
      headers: expect.objectContaining({ authorization: `Bearer ${TEAM_TOKEN}`, "content-type": "application/json" }),
      body: JSON.stringify({ teamSlug: "acme", projectSlug: "my-app", deploymentType: "prod" }),
    });
    expect(deployment).toEqual(provisionAnswer);
  });

  it("the full workflow uses both calls against PROVISION_HOST and keeps the deployment-scoped key", async () => {
    const host = "https://provision.example.test";
    server.use(answer(`${host}/api/create_project`, createProjectAnswer), answer(`${host}/api/deployment/provision_and_authorize`, provisionAnswer));
    const project = await provisionManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "My App" }, { provisionHost: `${host}/` });
    expect(seen.map((request) => request.url)).toEqual([`${host}/api/create_project`, `${host}/api/deployment/provision_and_authorize`]);
    expect(project).toEqual({ token: ADMIN_KEY, deploymentName: "happy-animal-123", deploymentUrl: DEPLOYMENT_URL, projectSlug: "my-app", teamSlug: "acme", projectId: 42, projectsRemaining: 5 });
  });

  it("accepts a dev:<deployment> key but refuses a key that carries the team token", async () => {
    server.use(answer(`${API}/api/create_project`, createProjectAnswer), answer(`${API}/api/deployment/provision_and_authorize`, { ...provisionAnswer, adminKey: "dev:happy-animal-123|abc" }));
    const project = await provisionManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "My App" });
    expect(project.token).toBe("dev:happy-animal-123|abc");

    server.use(answer(`${API}/api/deployment/provision_and_authorize`, { ...provisionAnswer, adminKey: `project:acme:my-app|${TEAM_TOKEN}` }));
    const failure = provisionManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "My App" });
    await expect(failure).rejects.toMatchObject({ code: "backend_bad_admin_key" });
    await expect(failure).rejects.not.toThrow(TEAM_TOKEN);
  });

  it("delete: the documented POST /v1/projects/{id}/delete, no body; ProjectNotFound is false", async () => {
    server.use(answer(`${API}/v1/projects/42/delete`, null));
    expect(await deleteManagedProject({ teamScopedToken: TEAM_TOKEN, projectId: 42 })).toBe(true);
    expect(seen[0]).toMatchObject({ method: "POST", url: `${API}/v1/projects/42/delete`, body: "", headers: expect.objectContaining({ authorization: `Bearer ${TEAM_TOKEN}` }) });
    expect(seen[0].headers["content-type"]).toBeUndefined();

    server.use(answer(`${API}/v1/projects/43/delete`, { code: "ProjectNotFound", message: "The requested project does not exist" }, 404));
    expect(await deleteManagedProject({ teamScopedToken: TEAM_TOKEN, projectId: 43 })).toBe(false);
  });

  it("maps quota, SSO and invalid-token answers to their errors", async () => {
    const call = () => createManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "x" });
    server.use(answer(`${API}/api/create_project`, { code: "ProjectQuotaReached", message: "Team acme has reached 20/20 projects" }, 400));
    await expect(call()).rejects.toBeInstanceOf(ProjectQuotaReachedError);
    await expect(call()).rejects.toThrow(/ProjectQuotaReached.*plan's project limit.*20\/20/);

    server.use(answer(`${API}/api/create_project`, { code: "SSORequired", message: "You must log in with Single Sign-on" }, 403));
    await expect(call()).rejects.toBeInstanceOf(BackendSsoRequiredError);

    server.use(answer(`${API}/api/create_project`, { code: "AccessTokenInvalid", message: "Access Token could not be decoded" }, 401));
    await expect(call()).rejects.toBeInstanceOf(BackendAuthError);
    await expect(call()).rejects.toThrow(/rejected the credentials \(401 AccessTokenInvalid\)/);
  });

  it("an unexpected success body is a bad-response error naming the fields", async () => {
    server.use(answer(`${API}/api/create_project`, { projectSlug: "x" }));
    const failure = createManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "x" });
    await expect(failure).rejects.toMatchObject({ code: "backend_bad_response" });
    await expect(failure).rejects.toThrow(/projectId/);
  });
});

describe("OAuth requests", () => {
  it("builds the dashboard authorize URL with response_type=code, state, scope and PKCE S256", () => {
    const url = getOAuthAuthorizeUrl({ clientId: "client 1", redirectUri: "https://app.example/backend/callback", state: "s&1", scope: "team", codeChallenge: "abc" });
    expect(url).toBe(
      "https://dashboard.convex.dev/oauth/authorize/team?client_id=client+1&redirect_uri=https%3A%2F%2Fapp.example%2Fbackend%2Fcallback" +
        "&response_type=code&state=s%261&scope=team&code_challenge=abc&code_challenge_method=S256",
    );
    expect(getOAuthAuthorizeUrl({ clientId: "c", redirectUri: "https://a.example/cb" }, { dashboardHost: "https://dash.example/" })).toBe(
      "https://dash.example/oauth/authorize/team?client_id=c&redirect_uri=https%3A%2F%2Fa.example%2Fcb&response_type=code",
    );
  });

  it("exchanges the code with a form-encoded POST /oauth/token", async () => {
    server.use(answer(`${API}/oauth/token`, { access_token: "team:acme|tok", token_type: "bearer", expires_in: 3600 }));
    const tokens = await exchangeOAuthCode({ code: "the-code", clientId: "cid", clientSecret: "csecret", redirectUri: "https://app.example/cb", codeVerifier: "verifier" });
    expect(tokens).toEqual({ access_token: "team:acme|tok", token_type: "bearer", expires_in: 3600 });
    expect(seen[0]).toMatchObject({ method: "POST", url: `${API}/oauth/token`, headers: expect.objectContaining({ "content-type": "application/x-www-form-urlencoded" }) });
    expect(seen[0].headers.authorization).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(seen[0].body))).toEqual({
      client_id: "cid",
      client_secret: "csecret",
      grant_type: "authorization_code",
      redirect_uri: "https://app.example/cb",
      code: "the-code",
      code_verifier: "verifier",
    });
  });

  it("creates and provisions with the user's access token as Bearer", async () => {
    server.use(answer(`${API}/api/create_project`, createProjectAnswer), answer(`${API}/api/deployment/provision_and_authorize`, provisionAnswer));
    await createBackendProject({ accessToken: "team:acme|user-token", teamSlug: "acme", projectName: "Mine", deploymentType: "prod" });
    expect(seen[0].body).toBe(JSON.stringify({ team: "acme", projectName: "Mine", deploymentType: "prod" }));
    const project = await provisionBackendProject({ accessToken: "team:acme|user-token", teamSlug: "acme", projectName: "Mine" });
    expect(seen.slice(1).map((request) => request.headers.authorization)).toEqual(["Bearer team:acme|user-token", "Bearer team:acme|user-token"]);
    expect(project.token).toBe(ADMIN_KEY);
  });
});

describe("requests to a hosted deployment", () => {
  const project = { deploymentUrl: DEPLOYMENT_URL, token: ADMIN_KEY };

  it("update_environment_variables: Convex <admin key>, all changes in one body", async () => {
    server.use(answer(`${DEPLOYMENT_URL}/api/update_environment_variables`, null));
    await setEnvVariables(project, { SITE_URL: "https://x.example", JWKS: "{}" });
    expect(seen).toEqual([
      {
        method: "POST",
        url: `${DEPLOYMENT_URL}/api/update_environment_variables`,
        headers: expect.objectContaining({ authorization: `Convex ${ADMIN_KEY}`, "content-type": "application/json" }),
        body: JSON.stringify({ changes: [{ name: "SITE_URL", value: "https://x.example" }, { name: "JWKS", value: "{}" }] }),
      },
    ]);
  });

  it("query: the CLI's system function; value, null, and status error", async () => {
    server.use(answer(`${DEPLOYMENT_URL}/api/query`, { status: "success", value: { name: "JWKS", value: "{}" } }));
    expect(await queryEnvVariable(project, "JWKS")).toBe("{}");
    expect(seen[0]).toMatchObject({
      headers: expect.objectContaining({ authorization: `Convex ${ADMIN_KEY}`, "content-type": "application/json" }),
      body: JSON.stringify({ path: "_system/cli/queryEnvironmentVariables:get", format: "convex_encoded_json", args: [{ name: "JWKS" }] }),
    });

    server.use(answer(`${DEPLOYMENT_URL}/api/query`, { status: "success", value: null }));
    expect(await queryEnvVariable(project, "JWKS")).toBeNull();

    server.use(answer(`${DEPLOYMENT_URL}/api/query`, { status: "error", errorMessage: "Missing permission ViewEnvironmentVariables" }));
    const failure = queryEnvVariable(project, "JWKS");
    await expect(failure).rejects.toBeInstanceOf(BackendApiError);
    await expect(failure).rejects.toThrow(/ViewEnvironmentVariables/);
  });
});
