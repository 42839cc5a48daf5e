import { describe, expect, it } from "vitest";
import { formatAdminKey, parseAdminKey, teamSlugFromAccessToken, toStoredAdminKey } from "@/lib/backend";

describe("admin key format", () => {
  it("formats and parses project:<team>:<project>|<token>", () => {
    const key = formatAdminKey({ teamSlug: "acme", projectSlug: "my-app", token: "s3cr3t" });
    expect(key).toBe("project:acme:my-app|s3cr3t");
    expect(parseAdminKey(key)).toEqual({ teamSlug: "acme", projectSlug: "my-app", token: "s3cr3t" });
  });

  it("refuses slugs and tokens that would break the format", () => {
    expect(() => formatAdminKey({ teamSlug: "a:b", projectSlug: "p", token: "t" })).toThrow(TypeError);
    expect(() => formatAdminKey({ teamSlug: "a", projectSlug: "p|q", token: "t" })).toThrow(TypeError);
    expect(() => formatAdminKey({ teamSlug: "a", projectSlug: "p", token: "" })).toThrow(TypeError);
    expect(() => formatAdminKey({ teamSlug: "a", projectSlug: "p", token: "x|y" })).toThrow(TypeError);
  });

  it("parses nothing else", () => {
    for (const key of ["dev:happy-animal-123|x", "prod:a|b", "project:a|b", "project:a:b:c|d", "project:a:b|c|d", "plain"]) {
      expect(parseAdminKey(key)).toBeNull();
    }
  });

  it("reads the team slug of OAuth team tokens", () => {
    expect(teamSlugFromAccessToken("team:acme|AAAA==")).toBe("acme");
    expect(teamSlugFromAccessToken("project:acme:app|x")).toBeNull();
  });
});

describe("toStoredAdminKey", () => {
  const expected = { teamSlug: "acme", projectSlug: "app", deploymentName: "happy-animal-123", platformToken: "team-token-123456" };

  it("keeps deployment-scoped keys of the provisioned project or deployment", () => {
    expect(toStoredAdminKey("project:acme:app|deploy-secret", expected)).toBe("project:acme:app|deploy-secret");
    expect(toStoredAdminKey("dev:happy-animal-123|x", expected)).toBe("dev:happy-animal-123|x");
    expect(toStoredAdminKey("happy-animal-123|0123abcd", expected)).toBe("happy-animal-123|0123abcd");
  });

  it("refuses the team token in disguise, foreign projects and unknown shapes", () => {
    expect(() => toStoredAdminKey("project:acme:app|team-token-123456", expected)).toThrow(/team-scoped token/);
    expect(() => toStoredAdminKey("team:acme|team-token-123456", { ...expected, platformToken: "team:acme|team-token-123456" })).toThrow(/team-scoped/);
    expect(() => toStoredAdminKey("project:acme:other|x", expected)).toThrow(/another project/);
    expect(() => toStoredAdminKey("dev:other-deployment-1|x", expected)).toThrow(/known deployment-scoped format/);
    expect(() => toStoredAdminKey("opaque", expected)).toThrow(/known deployment-scoped format/);
  });

  it("accepts a deploy key carrying the user's own OAuth token (no platform token to guard)", () => {
    const { platformToken: _platform, ...oauth } = expected;
    void _platform;
    expect(toStoredAdminKey("dev:happy-animal-123|team:acme|user-token", oauth)).toBe("dev:happy-animal-123|team:acme|user-token");
  });
});
