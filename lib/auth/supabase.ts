import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { getConfig } from "@/lib/config";

export interface ExternalIdentity {
  id: string;
  email: string | null;
}

let remoteJwks: ReturnType<typeof createRemoteJWKSet> | undefined;

/** Whether Supabase Auth access tokens are accepted as a caller identity. */
export function supabaseAuthEnabled(): boolean {
  const config = getConfig();
  return Boolean(config.SUPABASE_JWT_SECRET || config.SUPABASE_JWKS_URL);
}

/**
 * Verifies a Supabase Auth access token (HS256 with the project's JWT secret, or asymmetric
 * keys from its JWKS URL) and returns the user it names; null when it does not verify.
 */
export async function verifySupabaseJwt(token: string): Promise<ExternalIdentity | null> {
  const config = getConfig();
  let payload: JWTPayload;
  try {
    if (config.SUPABASE_JWT_SECRET) {
      ({ payload } = await jwtVerify(token, new TextEncoder().encode(config.SUPABASE_JWT_SECRET), {
        algorithms: ["HS256"],
        audience: "authenticated",
      }));
    } else if (config.SUPABASE_JWKS_URL) {
      remoteJwks ??= createRemoteJWKSet(new URL(config.SUPABASE_JWKS_URL));
      ({ payload } = await jwtVerify(token, remoteJwks, { audience: "authenticated" }));
    } else {
      return null;
    }
  } catch {
    return null;
  }
  if (typeof payload.sub !== "string") return null;
  return { id: payload.sub, email: typeof payload.email === "string" ? payload.email : null };
}
