import crypto from "node:crypto";
import { z } from "zod";
import { DEFAULT_DASHBOARD_HOST, DEFAULT_PROVISION_HOST, joinUrl, parseWire, postForm, type ManagementApiOptions } from "./client";
import {
  createProjectWithToken,
  provisionProjectWithToken,
  type ProvisionWorkflowOptions,
} from "./provisioning";
import type { CreateProjectResponse, DeploymentType, OAuthTokenResponse, ProvisionedBackendProject } from "./types";

/** OAuth mode (spec 5.3): the user authorizes our OAuth app on their own team. */

export interface OAuthAuthorizeUrlInput {
  clientId: string;
  redirectUri: string;
  /** Opaque value echoed back to the redirect URI; bind it to the user and project. */
  state?: string;
  scope?: string;
  /** PKCE S256 challenge (see {@link createPkcePair}); only S256 is supported by the backend. */
  codeChallenge?: string;
}

/**
 * The consent URL on the dashboard host: `/oauth/authorize/team` with `response_type=code`.
 * @param options.dashboardHost defaults to `https://dashboard.convex.dev`.
 */
export function getOAuthAuthorizeUrl(input: OAuthAuthorizeUrlInput, options: { dashboardHost?: string } = {}): string {
  const url = new URL(joinUrl(options.dashboardHost ?? DEFAULT_DASHBOARD_HOST, "/oauth/authorize/team"));
  url.searchParams.set("client_id", input.clientId);
  url.searchParams.set("redirect_uri", input.redirectUri);
  url.searchParams.set("response_type", "code");
  if (input.state !== undefined) url.searchParams.set("state", input.state);
  if (input.scope !== undefined) url.searchParams.set("scope", input.scope);
  if (input.codeChallenge !== undefined) {
    url.searchParams.set("code_challenge", input.codeChallenge);
    url.searchParams.set("code_challenge_method", "S256");
  }
  return url.toString();
}

/** A fresh PKCE pair: keep `codeVerifier` server-side, send `codeChallenge` in the authorize URL. */
export function createPkcePair(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = crypto.randomBytes(32).toString("base64url");
  return { codeVerifier, codeChallenge: crypto.createHash("sha256").update(codeVerifier).digest("base64url") };
}

const tokenWire = z.object({
  access_token: z.string().min(1),
  token_type: z.string().refine((value) => value.toLowerCase() === "bearer", "expected bearer"),
  expires_in: z.number().optional(),
  refresh_token: z.string().min(1).optional(),
});

export interface ExchangeOAuthCodeInput {
  code: string;
  clientId: string;
  /** Secret. */
  clientSecret: string;
  /** Must equal the redirect URI of the authorize URL. */
  redirectUri: string;
  /** PKCE verifier, when the authorize URL carried a challenge. */
  codeVerifier?: string;
}

/** Exchanges an authorization code (single use, valid 10 min) at `POST <provisionHost>/oauth/token`. */
export async function exchangeOAuthCode(input: ExchangeOAuthCodeInput, options: ManagementApiOptions = {}): Promise<OAuthTokenResponse> {
  const operation = "exchange the OAuth code";
  const form: Record<string, string> = {
    client_id: input.clientId,
    client_secret: input.clientSecret,
    grant_type: "authorization_code",
    redirect_uri: input.redirectUri,
    code: input.code,
  };
  if (input.codeVerifier !== undefined) form.code_verifier = input.codeVerifier;
  const body = await postForm(
    {
      operation,
      url: joinUrl(options.provisionHost ?? DEFAULT_PROVISION_HOST, "/oauth/token"),
      form,
      secrets: [input.clientSecret, input.code, ...(input.codeVerifier ? [input.codeVerifier] : [])],
    },
    options,
  );
  const wire = parseWire(tokenWire, body, operation);
  return {
    access_token: wire.access_token,
    token_type: "bearer",
    ...(wire.expires_in !== undefined && { expires_in: wire.expires_in }),
    ...(wire.refresh_token !== undefined && { refresh_token: wire.refresh_token }),
  };
}

export interface BackendProjectInput {
  /** The user's OAuth access token (secret). */
  accessToken: string;
  /** The authorized team; for team tokens see `teamSlugFromAccessToken`. */
  teamSlug: string;
  projectName: string;
}

/** Creates a project on the user's team with their access token as Bearer. */
export function createBackendProject(
  input: BackendProjectInput & { deploymentType?: DeploymentType },
  options?: ManagementApiOptions,
): Promise<CreateProjectResponse> {
  const { accessToken, ...rest } = input;
  return createProjectWithToken({ bearerToken: accessToken, ...rest }, options);
}

/**
 * Full OAuth workflow → BackendProject (plus `projectId`), as {@link provisionManagedProject} with
 * the user's access token. The OAuth app's client id and secret are only needed for
 * {@link exchangeOAuthCode}.
 */
export function provisionBackendProject(input: BackendProjectInput, options?: ProvisionWorkflowOptions): Promise<ProvisionedBackendProject> {
  const { accessToken, ...rest } = input;
  return provisionProjectWithToken({ bearerToken: accessToken, owner: "user", ...rest }, options);
}
