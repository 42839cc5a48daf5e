import crypto from "node:crypto";
import type { EmulatorContext } from "./context";
import { renderAuthorizeError, renderConsentPage } from "./consent-page";
import { EmulatorError, randomSecret, readForm, secretsEqual } from "./http";
import { consumeOAuthCode, insertOAuthCode, insertOAuthToken } from "./store";

/**
 * OAuth authorization-code flow of the dashboard (consent page) and the token endpoint.
 *
 * Trust model: the emulator has no dashboard login. Whoever can open the consent page is treated
 * as the signed-in owner of the built-in team; the emulator is mounted only when
 * BACKEND_PROVIDER=local, i.e. on a developer's own installation.
 */

/** Codes must be exchanged within 10 minutes, once. */
const OAUTH_CODE_TTL_MS = 10 * 60 * 1000;

type AuthorizeParams = { clientId: string; redirectUri: string; state?: string; scope?: string; codeChallenge?: string };

/** Validates authorize parameters (query of the GET, form of the POST); an error message when invalid. */
function readAuthorizeParams(params: URLSearchParams, context: EmulatorContext): AuthorizeParams | string {
  const clientId = params.get("client_id") ?? "";
  if (clientId !== context.identity.oauthClientId) return "Unknown OAuth application (client_id).";
  const redirectUri = params.get("redirect_uri") ?? "";
  let parsed: URL;
  try {
    parsed = new URL(redirectUri);
  } catch {
    return "redirect_uri must be an absolute URL.";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "redirect_uri must use http or https.";
  if (params.get("response_type") !== "code") return "response_type must be 'code'.";
  const codeChallenge = params.get("code_challenge") ?? undefined;
  const method = params.get("code_challenge_method");
  if (codeChallenge !== undefined && method !== "S256") return "Only the S256 code_challenge_method is supported.";
  if (codeChallenge === undefined && method !== null) return "code_challenge_method requires a code_challenge.";
  return { clientId, redirectUri, state: params.get("state") ?? undefined, scope: params.get("scope") ?? undefined, codeChallenge };
}

/** GET: the consent page with one "Authorize" button posting the same parameters back. */
export async function showConsent(request: Request, context: EmulatorContext): Promise<Response> {
  const url = new URL(request.url);
  const params = readAuthorizeParams(url.searchParams, context);
  if (typeof params === "string") return renderAuthorizeError(params);
  const fields: Record<string, string> = { client_id: params.clientId, redirect_uri: params.redirectUri, response_type: "code" };
  if (params.state !== undefined) fields.state = params.state;
  if (params.scope !== undefined) fields.scope = params.scope;
  if (params.codeChallenge !== undefined) {
    fields.code_challenge = params.codeChallenge;
    fields.code_challenge_method = "S256";
  }
  return renderConsentPage({ action: url.pathname, teamSlug: context.builtInTeam.slug, redirectUri: params.redirectUri, fields });
}

/** POST (the button): issues a single-use code and redirects to `redirect_uri?code=…&state=…`. */
export async function grantConsent(request: Request, context: EmulatorContext): Promise<Response> {
  const params = readAuthorizeParams(await readForm(request), context);
  if (typeof params === "string") return renderAuthorizeError(params);
  const code = randomSecret();
  await insertOAuthCode(context.db, {
    code,
    clientId: params.clientId,
    teamId: context.builtInTeam.id,
    redirectUri: params.redirectUri,
    codeChallenge: params.codeChallenge ?? null,
    expiresAt: new Date(context.now().getTime() + OAUTH_CODE_TTL_MS),
  });
  const target = new URL(params.redirectUri);
  target.searchParams.set("code", code);
  if (params.state !== undefined) target.searchParams.set("state", params.state);
  return new Response(null, { status: 303, headers: { location: target.toString(), "cache-control": "no-store" } });
}

const invalidGrant = (why: string) => new EmulatorError(400, "InvalidGrant", `The authorization code ${why}.`);

/** `POST /oauth/token` (form-encoded): exchanges a code for a team access token `team:<slug>|<secret>`. */
export async function exchangeToken(request: Request, context: EmulatorContext): Promise<Response> {
  const form = await readForm(request);
  if (form.get("grant_type") !== "authorization_code") {
    throw new EmulatorError(400, "UnsupportedGrantType", "grant_type must be 'authorization_code'.");
  }
  const clientId = form.get("client_id") ?? "";
  const clientSecret = form.get("client_secret") ?? "";
  if (clientId !== context.identity.oauthClientId || !secretsEqual(clientSecret, context.identity.oauthClientSecret)) {
    throw new EmulatorError(401, "InvalidClient", "Unknown OAuth client or wrong client secret.");
  }
  const now = context.now();
  const grant = await consumeOAuthCode(context.db, form.get("code") ?? "", now);
  if (!grant) throw invalidGrant("is unknown or was already used");
  if (grant.expiresAt.getTime() <= now.getTime()) throw invalidGrant("has expired (codes are valid for 10 minutes)");
  if (grant.clientId !== clientId) throw invalidGrant("was issued to another client");
  if (grant.redirectUri !== form.get("redirect_uri")) throw invalidGrant("was issued for another redirect_uri");
  if (grant.codeChallenge !== null) {
    const verifier = form.get("code_verifier") ?? "";
    const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
    if (!verifier || challenge !== grant.codeChallenge) throw invalidGrant("does not match the PKCE code_verifier");
  }
  // The consent page only ever grants the built-in team.
  if (grant.teamId !== context.builtInTeam.id) throw invalidGrant("belongs to another team");
  const accessToken = `team:${context.builtInTeam.slug}|${randomSecret()}`;
  await insertOAuthToken(context.db, { token: accessToken, teamId: grant.teamId, clientId });
  return Response.json({ access_token: accessToken, token_type: "bearer" }, { headers: { "cache-control": "no-store" } });
}
