import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BackendAuthError,
  BackendSsoRequiredError,
  ProjectQuotaReachedError,
  createBackendProject,
  createManagedProject,
  deleteManagedProject,
  exchangeOAuthCode,
  findBackendProjectBySlug,
  getOAuthAuthorizeUrl,
  provisionBackendProject,
  provisionManagedDeployment,
  provisionManagedProject,
  queryEnvVariable,
  setEnvVariables,
} from "@/lib/backend";
import type { EmulatorExchange } from "@/lib/emulator";
import { checkExchange } from "../contract/openapi";

/**
 * Pins the exact requests sent to the hosted v1 Platform API (method, URL, headers, body) without
 * the network. Every pinned request and every mocked answer is also checked against the OpenAPI
 * documents, so neither side of these tests can drift from the real contract.
 */

const API = "https://api.convex.dev";
const TEAM_TOKEN = "team-scoped-token-0123456789";
const TEAM_ID = 7;
const DEPLOYMENT_URL = "https://happy-animal-123.convex.cloud";
const DEPLOY_KEY = "dev:happy-animal-123|deployment-scoped-secret";

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

const seen: Seen[] = [];
const contractProblems: string[] = [];
const server = setupServer();

/** A mocked v1 operation: records the request and checks both sides against the documents. */
function answer(method: "get" | "post", url: string, body: unknown, status = 200) {
  return http[method](url, async ({ request }) => {
    const requestBody = await request.clone().text();
    seen.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body: requestBody });
    const parsed = new URL(request.url);
    const api: EmulatorExchange["api"] = parsed.origin === DEPLOYMENT_URL ? "deployment" : "management";
    const responseBody = body === null ? "" : JSON.stringify(body);
    contractProblems.push(...checkExchange({ api, method: request.method, path: parsed.pathname, query: parsed.searchParams, requestBody, status, responseBody }));
    return body === null ? new HttpResponse(null, { status }) : HttpResponse.json(body as object, { status });
  });
}

const tokenDetails = answer("get", `${API}/v1/token_details`, { type: "teamToken", id: 3, teamId: TEAM_ID, name: "platform", createTime: 1_700_000_000_000 });
const noSuchProject = (host = API) =>
  answer("get", `${host}/v1/teams/acme/projects/app-0001`, { code: "ProjectNotFound", message: "The requested project does not exist" }, 404);
const createProjectAnswer = { projectId: 42, id: 42, slug: "app-0001", deploymentName: "happy-animal-123", deploymentUrl: DEPLOYMENT_URL };
const createProject = (host = API) => answer("post", `${host}/v1/teams/${TEAM_ID}/create_project`, createProjectAnswer);
const createDeployKey = (host = API, deployKey = DEPLOY_KEY) => answer("post", `${host}/v1/deployments/happy-animal-123/create_deploy_key`, { deployKey });
const projectAnswer = { id: 42, name: "app-0001", slug: "app-0001", teamId: TEAM_ID, teamSlug: "acme", createTime: 1_700_000_000_000, devDeploymentName: "happy-animal-123" };
const deploymentAnswer = {
  kind: "cloud",
  id: 9,
  name: "happy-animal-123",
  createTime: 1_700_000_000_000,
  deploymentType: "dev",
  projectId: 42,
  region: "aws-us-east-1",
  isDefault: true,
  reference: "dev/happy-animal-123",
  deploymentUrl: DEPLOYMENT_URL,
  class: "s16",
};

const bearer = (token: string) => expect.objectContaining({ authorization: `Bearer ${token}` });
const json = expect.objectContaining({ "content-type": "application/json" });

beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => {
  server.resetHandlers();
  seen.length = 0;
  expect(contractProblems.splice(0)).toEqual([]);
});
afterAll(() => server.close());

describe("requests to the hosted v1 management API", () => {
  it("create_project: the team id from token_details, then POST /v1/teams/{id}/create_project", async () => {
    server.use(tokenDetails, createProject());
    const created = await createManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "My App", deploymentType: "dev" });
    expect(seen).toEqual([
      { method: "GET", url: `${API}/v1/token_details`, headers: bearer(TEAM_TOKEN), body: "" },
      { method: "POST", url: `${API}/v1/teams/${TEAM_ID}/create_project`, headers: bearer(TEAM_TOKEN), body: JSON.stringify({ projectName: "My App", deploymentType: "dev" }) },
    ]);
    expect(seen[1].headers).toEqual(json);
    expect(created).toEqual({ projectSlug: "app-0001", projectId: 42, teamSlug: "acme", deploymentName: "happy-animal-123", prodUrl: DEPLOYMENT_URL });
  });

  it("provisionManagedDeployment: project by slug, list_deployments, create_deployment when missing, create_deploy_key", async () => {
    server.use(
      answer("get", `${API}/v1/teams/acme/projects/app-0001`, projectAnswer),
      answer("get", `${API}/v1/projects/42/list_deployments`, []),
      answer("post", `${API}/v1/projects/42/create_deployment`, deploymentAnswer),
      createDeployKey(),
    );
    const deployment = await provisionManagedDeployment({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectSlug: "app-0001" });
    expect(seen.map(({ method, url, body }) => [method, url, body])).toEqual([
      ["GET", `${API}/v1/teams/acme/projects/app-0001`, ""],
      ["GET", `${API}/v1/projects/42/list_deployments?deploymentType=dev`, ""],
      ["POST", `${API}/v1/projects/42/create_deployment`, JSON.stringify({ type: "dev" })],
      ["POST", `${API}/v1/deployments/happy-animal-123/create_deploy_key`, JSON.stringify({ name: "cloud-backend-service" })],
    ]);
    expect(seen.every((request) => request.headers.authorization === `Bearer ${TEAM_TOKEN}`)).toBe(true);
    expect(deployment).toEqual({ deploymentName: "happy-animal-123", url: DEPLOYMENT_URL, adminKey: DEPLOY_KEY, deploymentType: "dev" });
  });

  it("the full workflow against PROVISION_HOST: look up by slug, create with a dev deployment, deploy key", async () => {
    const host = "https://provision.example.test";
    server.use(answer("get", `${host}/v1/token_details`, { type: "teamToken", id: 3, teamId: TEAM_ID, name: "t", createTime: 1 }), noSuchProject(host), createProject(host), createDeployKey(host));
    const project = await provisionManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "app-0001" }, { provisionHost: `${host}/` });
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual([
      `GET ${host}/v1/token_details`,
      `GET ${host}/v1/teams/acme/projects/app-0001`,
      `POST ${host}/v1/teams/${TEAM_ID}/create_project`,
      `POST ${host}/v1/deployments/happy-animal-123/create_deploy_key`,
    ]);
    expect(project).toEqual({ token: DEPLOY_KEY, deploymentName: "happy-animal-123", deploymentUrl: DEPLOYMENT_URL, projectSlug: "app-0001", teamSlug: "acme", projectId: 42 });
  });

  it("adopts an existing project: its dev deployment from list_deployments and a fresh deploy key, no create", async () => {
    server.use(tokenDetails, answer("get", `${API}/v1/teams/acme/projects/app-0001`, projectAnswer), answer("get", `${API}/v1/projects/42/list_deployments`, [deploymentAnswer]), createDeployKey());
    const project = await provisionManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "app-0001" });
    expect(seen.map((request) => request.url)).not.toContain(`${API}/v1/teams/${TEAM_ID}/create_project`);
    expect(project).toMatchObject({ projectId: 42, deploymentUrl: DEPLOYMENT_URL, token: DEPLOY_KEY });
    expect(await findBackendProjectBySlug({ bearerToken: TEAM_TOKEN, team: "acme", projectSlug: "app-0001" })).toEqual({
      projectId: 42,
      projectSlug: "app-0001",
      projectName: "app-0001",
      teamSlug: "acme",
    });
  });

  it("refuses a deploy key that carries the team token", async () => {
    server.use(tokenDetails, noSuchProject(), createProject(), createDeployKey(API, `dev:happy-animal-123|${TEAM_TOKEN}`));
    const failure = provisionManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "app-0001" });
    await expect(failure).rejects.toMatchObject({ code: "backend_bad_admin_key" });
    await expect(failure).rejects.not.toThrow(TEAM_TOKEN);
  });

  it("delete: POST /v1/projects/{id}/delete, no body; ProjectNotFound is false", async () => {
    server.use(answer("post", `${API}/v1/projects/42/delete`, null));
    expect(await deleteManagedProject({ teamScopedToken: TEAM_TOKEN, projectId: 42 })).toBe(true);
    expect(seen[0]).toMatchObject({ method: "POST", url: `${API}/v1/projects/42/delete`, body: "", headers: bearer(TEAM_TOKEN) });

    server.use(answer("post", `${API}/v1/projects/43/delete`, { code: "ProjectNotFound", message: "The requested project does not exist" }, 404));
    expect(await deleteManagedProject({ teamScopedToken: TEAM_TOKEN, projectId: 43 })).toBe(false);
  });

  it("maps quota, SSO and invalid-token answers to their errors", async () => {
    const call = () => createManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "x" });
    const refuse = (body: { code: string; message: string }, status: number) => answer("post", `${API}/v1/teams/${TEAM_ID}/create_project`, body, status);
    server.use(tokenDetails, refuse({ code: "ProjectQuotaReached", message: "Team acme has reached 20/20 projects" }, 400));
    await expect(call()).rejects.toBeInstanceOf(ProjectQuotaReachedError);
    await expect(call()).rejects.toThrow(/ProjectQuotaReached.*plan's project limit.*20\/20/);

    server.use(refuse({ code: "SSORequired", message: "You must log in with Single Sign-on" }, 403));
    await expect(call()).rejects.toBeInstanceOf(BackendSsoRequiredError);

    server.use(answer("get", `${API}/v1/token_details`, { code: "AccessTokenInvalid", message: "Access Token could not be decoded" }, 401));
    await expect(call()).rejects.toBeInstanceOf(BackendAuthError);
    await expect(call()).rejects.toThrow(/rejected the credentials \(401 AccessTokenInvalid\)/);
  });

  it("a project-scoped token cannot provision: token_details says so", async () => {
    server.use(answer("get", `${API}/v1/token_details`, { type: "projectToken", id: 3, projectId: 42, name: "p", createTime: 1 }));
    await expect(createManagedProject({ teamScopedToken: TEAM_TOKEN, teamSlug: "acme", projectName: "x" })).rejects.toMatchObject({ code: "backend_token_not_team_scoped" });
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

  it("exchanges the code with a form-encoded POST /oauth/token (standard OAuth 2.0 with PKCE)", async () => {
    server.use(answer("post", `${API}/oauth/token`, { access_token: "team:acme|tok", token_type: "bearer", expires_in: 3600 }));
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

  it("creates and provisions with the user's access token as Bearer; a deploy key built from that token is kept", async () => {
    // The hosted API makes an OAuth-granted deploy key from the granted token itself.
    const oauthKey = "dev:happy-animal-123|team:acme|user-token";
    server.use(tokenDetails, noSuchProject(), createProject(), createDeployKey(API, oauthKey));
    await createBackendProject({ accessToken: "team:acme|user-token", teamSlug: "acme", projectName: "Mine", deploymentType: "prod" });
    expect(seen[1].body).toBe(JSON.stringify({ projectName: "Mine", deploymentType: "prod" }));
    const project = await provisionBackendProject({ accessToken: "team:acme|user-token", teamSlug: "acme", projectName: "app-0001" });
    expect(new Set(seen.map((request) => request.headers.authorization))).toEqual(new Set(["Bearer team:acme|user-token"]));
    expect(project.token).toBe(oauthKey);
  });
});

describe("requests to a hosted deployment (v1 deployment API)", () => {
  const project = { deploymentUrl: DEPLOYMENT_URL, token: DEPLOY_KEY };

  it("update_environment_variables: Convex <deploy key>, all changes in one body", async () => {
    server.use(answer("post", `${DEPLOYMENT_URL}/api/v1/update_environment_variables`, null));
    await setEnvVariables(project, { SITE_URL: "https://x.example", JWKS: "{}" });
    expect(seen).toEqual([
      {
        method: "POST",
        url: `${DEPLOYMENT_URL}/api/v1/update_environment_variables`,
        headers: expect.objectContaining({ authorization: `Convex ${DEPLOY_KEY}`, "content-type": "application/json" }),
        body: JSON.stringify({ changes: [{ name: "SITE_URL", value: "https://x.example" }, { name: "JWKS", value: "{}" }] }),
      },
    ]);
  });

  it("queryEnvVariable: list_environment_variables, the value or null", async () => {
    server.use(answer("get", `${DEPLOYMENT_URL}/api/v1/list_environment_variables`, { environmentVariables: { JWKS: "{}" } }));
    expect(await queryEnvVariable(project, "JWKS")).toBe("{}");
    expect(await queryEnvVariable(project, "SITE_URL")).toBeNull();
    expect(await queryEnvVariable(project, "toString")).toBeNull();
    expect(seen[0]).toMatchObject({ method: "GET", body: "", headers: expect.objectContaining({ authorization: `Convex ${DEPLOY_KEY}` }) });
  });
});
