import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { z } from "zod";
import type { UserIdentity } from "./runtime";

/**
 * User identities from JWTs, checked against the providers of the pushed `convex/auth.config.ts`
 * as the backend checks them: an OIDC provider (`{domain, applicationID}`: issuer = domain,
 * audience = applicationID, keys from the issuer's discovery document; Convex Auth points it at the
 * deployment's own site URL, whose HTTP actions serve the keys) or a custom JWT provider
 * (`{type: "customJwt", issuer, jwks, algorithm, applicationID?}`, `jwks` a URL or a data: URI).
 */

const oidcProvider = z.object({ domain: z.string(), applicationID: z.string() });
const customJwtProvider = z.object({
  type: z.literal("customJwt"),
  issuer: z.string(),
  jwks: z.string(),
  algorithm: z.string(),
  applicationID: z.string().nullish(),
});

/** The backend's answer to a token no provider accepts. */
export const INVALID_TOKEN_MESSAGE = "Could not verify OIDC token claim. Check that the token signature is valid and the token hasn't expired.";

export class InvalidUserToken extends Error {
  constructor() {
    super(INVALID_TOKEN_MESSAGE);
    this.name = "InvalidUserToken";
  }
}

/** Standard claims under the names `ctx.auth.getUserIdentity()` gives them. */
const CLAIM_NAMES: Record<string, string> = {
  name: "name",
  given_name: "givenName",
  family_name: "familyName",
  nickname: "nickname",
  preferred_username: "preferredUsername",
  profile: "profileUrl",
  picture: "pictureUrl",
  email: "email",
  email_verified: "emailVerified",
  gender: "gender",
  birthdate: "birthday",
  zoneinfo: "timezone",
  locale: "language",
  phone_number: "phoneNumber",
  phone_number_verified: "phoneNumberVerified",
  address: "address",
  updated_at: "updatedAt",
};
/** Claims about the token itself, not the user. */
const TOKEN_CLAIMS = new Set(["iss", "sub", "aud", "exp", "nbf", "iat", "jti"]);

const trimSlash = (url: string) => url.replace(/\/+$/, "");

const keySets = new Map<string, JWTVerifyGetKey>();

/** The key set at a URL or in a data: URI, cached per location (jose refreshes remote sets itself). */
function keySet(location: string): JWTVerifyGetKey {
  let keys = keySets.get(location);
  if (!keys) {
    if (location.startsWith("data:")) {
      const comma = location.indexOf(",");
      const payload = location.slice(comma + 1);
      const text = location.slice(0, comma).endsWith(";base64") ? Buffer.from(payload, "base64").toString("utf8") : decodeURIComponent(payload);
      keys = createLocalJWKSet(JSON.parse(text));
    } else {
      keys = createRemoteJWKSet(new URL(location));
    }
    keySets.set(location, keys);
  }
  return keys;
}

/** The OIDC discovery document's `jwks_uri` of an issuer (fetched each time: a local site URL's keys may change with a push). */
async function discoveredKeys(domain: string): Promise<JWTVerifyGetKey> {
  const response = await fetch(`${trimSlash(domain)}/.well-known/openid-configuration`);
  if (!response.ok) throw new InvalidUserToken();
  const { jwks_uri: jwksUri } = z.object({ jwks_uri: z.string() }).parse(await response.json());
  return createRemoteJWKSet(new URL(jwksUri));
}

function toIdentity(payload: JWTPayload): UserIdentity {
  const issuer = payload.iss ?? "";
  const subject = payload.sub ?? "";
  const identity: UserIdentity = { tokenIdentifier: `${issuer}|${subject}`, subject, issuer };
  for (const [claim, value] of Object.entries(payload)) {
    if (TOKEN_CLAIMS.has(claim)) continue;
    identity[CLAIM_NAMES[claim] ?? claim] = value;
  }
  return identity;
}

/** Tokens already verified, until they expire or {@link VERIFIED_TOKEN_TTL_MS} passed (HTTP clients send one with every call). */
const verified = new Map<string, { identity: UserIdentity; until: number }>();
const VERIFIED_TOKEN_TTL_MS = 60_000;
const MAX_VERIFIED_TOKENS = 1_000;

/** The identity of a token that one of the pushed auth providers accepts; throws {@link InvalidUserToken} otherwise. */
export async function verifyUserToken(providers: readonly unknown[], token: string): Promise<UserIdentity> {
  const key = `${JSON.stringify(providers)}\n${token}`;
  const known = verified.get(key);
  if (known && known.until > Date.now()) return known.identity;
  const payload = await verifyWithProviders(providers, token);
  const identity = toIdentity(payload);
  if (verified.size >= MAX_VERIFIED_TOKENS) verified.clear();
  const expiresAt = payload.exp === undefined ? Infinity : payload.exp * 1000;
  verified.set(key, { identity, until: Math.min(expiresAt, Date.now() + VERIFIED_TOKEN_TTL_MS) });
  return identity;
}

/** The claims of a token that one of the providers accepts. */
async function verifyWithProviders(providers: readonly unknown[], token: string): Promise<JWTPayload> {
  let issuer: string | undefined;
  try {
    issuer = decodeJwt(token).iss;
  } catch {
    throw new InvalidUserToken();
  }
  for (const provider of providers) {
    const custom = customJwtProvider.safeParse(provider);
    const oidc = oidcProvider.safeParse(provider);
    try {
      if (custom.success && issuer === custom.data.issuer) {
        const { payload } = await jwtVerify(token, keySet(custom.data.jwks), {
          issuer: custom.data.issuer,
          algorithms: [custom.data.algorithm],
          ...(custom.data.applicationID ? { audience: custom.data.applicationID } : {}),
        });
        return payload;
      }
      if (oidc.success && issuer !== undefined && trimSlash(issuer) === trimSlash(oidc.data.domain)) {
        const { payload } = await jwtVerify(token, await discoveredKeys(oidc.data.domain), { audience: oidc.data.applicationID });
        return payload;
      }
    } catch {
      // Another provider may still accept it.
    }
  }
  throw new InvalidUserToken();
}
