import { createLocalJWKSet, importPKCS8, jwtVerify, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { generateAuthKeys } from "@/lib/backend";

describe("generateAuthKeys", () => {
  it("returns a one-line PKCS#8 RS256 key and its JWKS entry", async () => {
    const keys = await generateAuthKeys();
    expect(keys.JWT_PRIVATE_KEY).toMatch(/^-----BEGIN PRIVATE KEY----- [A-Za-z0-9+/= ]+ -----END PRIVATE KEY-----$/);
    expect(keys.JWT_PRIVATE_KEY).not.toContain("\n");
    expect(keys.JWKS.keys).toHaveLength(1);
    expect(Object.keys(keys.JWKS.keys[0]).sort()).toEqual(["alg", "e", "kty", "n", "use"]);
    expect(keys.JWKS.keys[0]).toMatchObject({ use: "sig", alg: "RS256", kty: "RSA", e: "AQAB" });

    // The consumer side reads the space-joined PEM as is and verifies with the JWKS.
    const token = await new SignJWT({}).setProtectedHeader({ alg: "RS256" }).setIssuer("site").sign(await importPKCS8(keys.JWT_PRIVATE_KEY, "RS256"));
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys.JWKS));
    expect(payload.iss).toBe("site");
  });

  it("generates a different pair each time", async () => {
    const [first, second] = await Promise.all([generateAuthKeys(), generateAuthKeys()]);
    expect(first.JWKS.keys[0].n).not.toBe(second.JWKS.keys[0].n);
  });
});
