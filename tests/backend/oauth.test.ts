import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BackendApiError,
  BackendAuthError,
  createBackendProject,
  createPkcePair,
  exchangeOAuthCode,
  getOAuthAuthorizeUrl,
  provisionBackendProject,
  queryEnvVariable,
  setEnvVariables,
  teamSlugFromAccessToken,
} from "@/lib/backend";
import { clickAuthorize, startTestEmulator, type TestEmulator } from "./emulator-fixture";

const REDIRECT_URI = "http://127.0.0.1:3000/backend/callback?from=test";

describe("OAuth flow against the emulator over HTTP", () => {
  let emulator: TestEmulator;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    emulator = await startTestEmulator();
    const { identity } = emulator.server.emulator;
    client = { clientId: identity.oauthClientId, clientSecret: identity.oauthClientSecret };
  });
  afterAll(() => emulator.server.close());

  it("authorizes, exchanges the code (PKCE) and provisions on the user's team", async () => {
    const pkce = createPkcePair();
    const authorizeUrl = getOAuthAuthorizeUrl(
      { clientId: client.clientId, redirectUri: REDIRECT_URI, state: "state-123", scope: "team", codeChallenge: pkce.codeChallenge },
      emulator.dashboard,
    );
    const redirect = await clickAuthorize(authorizeUrl);
    expect(redirect.origin + redirect.pathname).toBe("http://127.0.0.1:3000/backend/callback");
    expect(redirect.searchParams.get("from")).toBe("test");
    expect(redirect.searchParams.get("state")).toBe("state-123");
    const code = redirect.searchParams.get("code")!;

    const tokens = await exchangeOAuthCode(
      { code, ...client, redirectUri: REDIRECT_URI, codeVerifier: pkce.codeVerifier },
      emulator.management,
    );
    expect(tokens).toEqual({ access_token: expect.stringMatching(/^team:local-team\|/), token_type: "bearer" });
    const teamSlug = teamSlugFromAccessToken(tokens.access_token)!;
    expect(teamSlug).toBe(emulator.team.teamSlug);

    const created = await createBackendProject({ accessToken: tokens.access_token, teamSlug, projectName: "oauth one" }, emulator.management);
    expect(created).toMatchObject({ projectSlug: "oauth-one", teamSlug, projectId: expect.any(Number) });

    const project = await provisionBackendProject({ accessToken: tokens.access_token, teamSlug, projectName: "oauth two" }, emulator.management);
    expect(project).toMatchObject({ teamSlug, projectSlug: "oauth-two" });
    expect(project.token).toMatch(new RegExp(`^dev:${project.deploymentName}\\|`));
    expect(project.token).not.toContain(tokens.access_token.split("|")[1]);
    await setEnvVariables(project, { FROM_OAUTH: "1" });
    expect(await queryEnvVariable(project, "FROM_OAUTH")).toBe("1");

    // Codes are single use.
    const replay = exchangeOAuthCode({ code, ...client, redirectUri: REDIRECT_URI, codeVerifier: pkce.codeVerifier }, emulator.management);
    await expect(replay).rejects.toMatchObject({ upstreamStatus: 400, upstreamCode: "InvalidGrant", retryable: false });
  });

  it("rejects a wrong PKCE verifier, another redirect URI and a wrong client secret", async () => {
    const pkce = createPkcePair();
    const authorize = () =>
      clickAuthorize(getOAuthAuthorizeUrl({ clientId: client.clientId, redirectUri: REDIRECT_URI, codeChallenge: pkce.codeChallenge }, emulator.dashboard));

    const first = (await authorize()).searchParams.get("code")!;
    const wrongVerifier = exchangeOAuthCode({ code: first, ...client, redirectUri: REDIRECT_URI, codeVerifier: createPkcePair().codeVerifier }, emulator.management);
    await expect(wrongVerifier).rejects.toThrow(/PKCE/);

    const second = (await authorize()).searchParams.get("code")!;
    const otherRedirect = exchangeOAuthCode({ code: second, ...client, redirectUri: "http://127.0.0.1:3000/elsewhere", codeVerifier: pkce.codeVerifier }, emulator.management);
    await expect(otherRedirect).rejects.toThrow(/redirect_uri/);

    const third = (await authorize()).searchParams.get("code")!;
    const wrongSecret = exchangeOAuthCode({ code: third, clientId: client.clientId, clientSecret: "wrong-secret", redirectUri: REDIRECT_URI, codeVerifier: pkce.codeVerifier }, emulator.management);
    await expect(wrongSecret).rejects.toBeInstanceOf(BackendAuthError);
  });

  it("refuses an unknown OAuth token on the management API", async () => {
    const failure = createBackendProject({ accessToken: "team:local-team|forged", teamSlug: "local-team", projectName: "x" }, emulator.management);
    await expect(failure).rejects.toBeInstanceOf(BackendApiError);
    await expect(failure).rejects.toMatchObject({ upstreamStatus: 401 });
  });
});
