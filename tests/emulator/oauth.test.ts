import crypto from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { BASE, emulatorClient } from "./helpers";

const REDIRECT = "https://app.example/backend/callback";
const TEN_MINUTES = 10 * 60 * 1000;

describe("emulated OAuth consent page and token endpoint", () => {
  let now = new Date("2026-11-23T10:00:00Z");
  const { call, form, identity, teamId, close } = emulatorClient({ now: () => now });
  afterAll(close);
  const authorizeQuery = (extra: Record<string, string> = {}) =>
    new URLSearchParams({ client_id: identity.oauthClientId, redirect_uri: REDIRECT, response_type: "code", ...extra }).toString();

  async function grant(extra: Record<string, string> = {}): Promise<string> {
    const response = await call("/dashboard/oauth/authorize/team", form({ client_id: identity.oauthClientId, redirect_uri: REDIRECT, response_type: "code", ...extra }));
    expect(response.status).toBe(303);
    return new URL(response.headers.get("location")!).searchParams.get("code")!;
  }
  const exchange = (code: string, extra: Record<string, string> = {}) =>
    call("/oauth/token", form({ grant_type: "authorization_code", client_id: identity.oauthClientId, client_secret: identity.oauthClientSecret, redirect_uri: REDIRECT, code, ...extra }));

  it("renders one form with an Authorize button, escaping every parameter, unframeable", async () => {
    const response = await call(`/dashboard/oauth/authorize/team?${authorizeQuery({ state: `"><script>alert(1)</script>` })}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await response.text();
    expect(html).toContain('<form method="post" action="/emulator/dashboard/oauth/authorize/team">');
    expect(html.match(/<button/g)).toHaveLength(1);
    expect(html).toContain(">Authorize</button>");
    expect(html).not.toContain("<script>");
    expect(html).toContain("&quot;&gt;&lt;script&gt;");
    expect(html).toContain("local-team");
  });

  it("refuses unknown clients, bad redirect URIs, other response types and non-S256 PKCE", async () => {
    const bad = [
      authorizeQuery({ client_id: "someone-else" }),
      authorizeQuery({ redirect_uri: "javascript:alert(1)" }),
      authorizeQuery({ redirect_uri: "/relative" }),
      authorizeQuery({ response_type: "token" }),
      authorizeQuery({ code_challenge: "abc", code_challenge_method: "plain" }),
      authorizeQuery({ code_challenge_method: "S256" }),
    ];
    for (const query of bad) {
      const response = await call(`/dashboard/oauth/authorize/team?${query}`);
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
    }
  });

  it("redirects with code and state, keeping the redirect URI's own query", async () => {
    const response = await call(
      "/dashboard/oauth/authorize/team",
      form({ client_id: identity.oauthClientId, redirect_uri: `${REDIRECT}?project=1`, response_type: "code", state: "xyz" }),
    );
    const location = new URL(response.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(location.searchParams)).toEqual({ project: "1", code: expect.any(String), state: "xyz" });
  });

  it("exchanges a code once for a team token that works on the management API", async () => {
    const code = await grant();
    const response = await exchange(code);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({ access_token: expect.stringMatching(/^team:local-team\|[A-Za-z0-9_-]+$/), token_type: "bearer" });
    const created = await call(`/v1/teams/${await teamId(`Bearer ${body.access_token}`)}/create_project`, {
      method: "POST",
      headers: { authorization: `Bearer ${body.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ projectName: "via oauth" }),
    });
    expect(created.status).toBe(200);
    const replay = await exchange(code);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toEqual({ code: "InvalidGrant", message: expect.stringContaining("already used") });
  });

  it("expires codes after 10 minutes", async () => {
    const start = now;
    const fresh = await grant();
    now = new Date(start.getTime() + TEN_MINUTES - 1);
    expect((await exchange(fresh)).status).toBe(200);

    now = start;
    const stale = await grant();
    now = new Date(start.getTime() + TEN_MINUTES);
    const response = await exchange(stale);
    expect(await response.json()).toEqual({ code: "InvalidGrant", message: expect.stringContaining("expired") });
    now = start;
  });

  it("checks PKCE, redirect URI, client secret and grant type", async () => {
    const verifier = "a-verifier-that-is-long-enough-0123456789";
    const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
    expect((await exchange(await grant({ code_challenge: challenge, code_challenge_method: "S256" }))).status).toBe(400);
    expect((await exchange(await grant({ code_challenge: challenge, code_challenge_method: "S256" }), { code_verifier: verifier })).status).toBe(200);
    expect((await exchange(await grant(), { redirect_uri: "https://evil.example/cb" })).status).toBe(400);
    const wrongSecret = await exchange(await grant(), { client_secret: "nope" });
    expect(wrongSecret.status).toBe(401);
    expect((await wrongSecret.json()).code).toBe("InvalidClient");
    const wrongGrant = await exchange(await grant(), { grant_type: "client_credentials" });
    expect((await wrongGrant.json()).code).toBe("UnsupportedGrantType");
  });

  it("serves the consent page below the dashboard prefix only", async () => {
    expect((await call(`/oauth/authorize/team?${authorizeQuery()}`)).status).toBe(404);
    expect(BASE.endsWith("/emulator")).toBe(true);
  });
});
