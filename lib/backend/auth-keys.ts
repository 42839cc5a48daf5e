import { exportJWK, exportPKCS8, generateKeyPair } from "jose";
import { log } from "@/lib/log";
import type { BackendRequestOptions } from "./client";
import { queryEnvVariableWithRetries, setEnvVariablesWithRetries } from "./env-vars";
import type { RetryOptions } from "./retries";
import type { DeploymentTarget } from "./types";

/** One public signing key as the backend's auth library reads it from `JWKS`. */
export interface SigningJwk {
  use: "sig";
  alg: "RS256";
  kty: string;
  n: string;
  e: string;
}

/** Spec 4.5 `generateAuthKeys` output. */
export interface AuthKeys {
  /** PKCS#8 PEM with newlines replaced by spaces (one line, fits an env var). Secret. */
  JWT_PRIVATE_KEY: string;
  JWKS: { keys: SigningJwk[] };
}

/** A fresh RS256 key pair for backend authentication. */
export async function generateAuthKeys(): Promise<AuthKeys> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const pem = await exportPKCS8(privateKey);
  const jwk = await exportJWK(publicKey);
  if (!jwk.kty || !jwk.n || !jwk.e) throw new Error("The generated public key is not an RSA JWK.");
  return {
    JWT_PRIVATE_KEY: pem.trimEnd().replace(/\n/g, " "),
    JWKS: { keys: [{ use: "sig", alg: "RS256", kty: jwk.kty, n: jwk.n, e: jwk.e }] },
  };
}

/** The deployment variables {@link initializeBackendAuth} manages. */
export const AUTH_VARIABLES = ["SITE_URL", "JWKS", "JWT_PRIVATE_KEY"] as const;

/**
 * Sets `SITE_URL`, `JWKS` and `JWT_PRIVATE_KEY` on the deployment, only those missing, in one
 * call. `JWKS` and `JWT_PRIVATE_KEY` are a pair: when either is missing both are regenerated,
 * otherwise existing sessions stay valid. Returns the names it set (empty when all were present).
 */
export async function initializeBackendAuth(
  project: DeploymentTarget,
  siteUrl: string,
  options: BackendRequestOptions & RetryOptions = {},
): Promise<string[]> {
  const [currentSiteUrl, jwks, privateKey] = await Promise.all(
    AUTH_VARIABLES.map((name) => queryEnvVariableWithRetries(project, name, options)),
  );
  const changes: Record<string, string> = {};
  if (currentSiteUrl === null) changes.SITE_URL = siteUrl;
  if (jwks === null || privateKey === null) {
    const keys = await generateAuthKeys();
    changes.JWKS = JSON.stringify(keys.JWKS);
    changes.JWT_PRIVATE_KEY = keys.JWT_PRIVATE_KEY;
  }
  const names = Object.keys(changes);
  if (names.length > 0) await setEnvVariablesWithRetries(project, changes, options);
  log.info("backend auth initialized", { set: names });
  return names;
}
