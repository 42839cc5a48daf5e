import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@/lib/config";

describe("config", () => {
  it("has embedded defaults for an empty environment", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      PUBLIC_BASE_URL: "http://localhost:3000",
      DATA_DIR: path.resolve(".data"),
      BLOB_DRIVER: "fs",
      SANDBOX_DRIVER: "local",
      REALTIME_DRIVER: "memory",
      BACKEND_PROVIDER: "local",
      CHROMIUM_PATH: "/usr/bin/chromium",
      SEED_DEMO: true,
    });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it("treats empty strings as unset and trims values", () => {
    const config = parseConfig({ DATABASE_URL: "", BACKEND_TEAM_SLUG: "  team  ", PUBLIC_BASE_URL: "https://x.example/" });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.BACKEND_TEAM_SLUG).toBe("team");
    expect(config.PUBLIC_BASE_URL).toBe("https://x.example");
  });

  it("puts local previews on another site than the dashboard unless told otherwise", () => {
    expect(parseConfig({}).LOCAL_PREVIEW_HOST).toBe("127.0.0.1");
    expect(parseConfig({ PUBLIC_BASE_URL: "http://127.0.0.1:3000" }).LOCAL_PREVIEW_HOST).toBe("localhost");
    expect(parseConfig({ PUBLIC_BASE_URL: "https://builder.example" }).LOCAL_PREVIEW_HOST).toBe("localhost");
    expect(parseConfig({ LOCAL_PREVIEW_HOST: "previews.test" }).LOCAL_PREVIEW_HOST).toBe("previews.test");
    expect(() => parseConfig({ LOCAL_PREVIEW_HOST: "http://x" })).toThrow(ConfigError);
  });

  it("knows the sandbox drivers: local (the sandbox service) by default, local-unwalled and e2b", () => {
    expect(parseConfig({}).SANDBOX_SERVICE_PORT).toBe(49982);
    expect(parseConfig({ SANDBOX_DRIVER: "local-unwalled" }).SANDBOX_DRIVER).toBe("local-unwalled");
    expect(parseConfig({ SANDBOX_DRIVER: "e2b" }).SANDBOX_DRIVER).toBe("e2b");
    expect(parseConfig({ SANDBOX_SERVICE_PORT: "41000" }).SANDBOX_SERVICE_PORT).toBe(41000);
    expect(() => parseConfig({ SANDBOX_DRIVER: "unwalled" })).toThrow(/SANDBOX_DRIVER/);
    expect(() => parseConfig({ SANDBOX_SERVICE_PORT: "port" })).toThrow(/SANDBOX_SERVICE_PORT/);
  });

  it("names every invalid variable", () => {
    try {
      parseConfig({ PORT: "eighty", BLOB_DRIVER: "ftp", SEED_DEMO: "maybe", PROVISION_HOST: "not a url" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const variables = (error as ConfigError).issues.map((issue) => issue.variable).sort();
      expect(variables).toEqual(["BLOB_DRIVER", "PORT", "PROVISION_HOST", "SEED_DEMO"]);
      expect((error as Error).message).toMatch(/PORT: expected an integer/);
    }
  });
});
