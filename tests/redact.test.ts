import { describe, expect, it } from "vitest";
import { redactSecrets, registerSecret } from "@/lib/log/redact";

describe("redactSecrets", () => {
  it.each([
    ["admin key", "using project:my-team:my-app|eyJ2MiI6IjEyMyJ9abc to deploy", "eyJ2MiI6IjEyMyJ9abc"],
    ["deploy key", "CONVEX_DEPLOY_KEY=prod:happy-animal-123|abcdef0123456789", "abcdef0123456789"],
    ["bearer header", "Authorization: Bearer cbs_abcdefghijklmnopqrstuvwxyz", "cbs_abcdefghijklmnopqrstuvwxyz"],
    ["convex header", "Authorization: Convex someadminkeyvalue123", "someadminkeyvalue123"],
    ["env assignment", "JWT_PRIVATE_KEY=\"-----BEGIN\" CLIENT_SECRET=s3cr3tvalue", "s3cr3tvalue"],
    [
      "pem block",
      "key -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY----- done",
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ],
  ])("removes %s", (_name, text, secret) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain("REDACTED");
  });

  it("removes registered exact values and leaves ordinary text alone", () => {
    registerSecret("team-token-value-xyz");
    expect(redactSecrets("token team-token-value-xyz leaked")).toBe("token [REDACTED] leaked");
    expect(redactSecrets("✖ Error: cannot find module './foo'")).toBe("✖ Error: cannot find module './foo'");
    expect(redactSecrets("✔ 12:00:01 Convex functions ready! (1.2s)")).toBe("✔ 12:00:01 Convex functions ready! (1.2s)");
  });
});
