import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { redactSecrets } from "@/lib/log";
import { RealtimeNotConfiguredError, createRealtime, getRealtime } from "@/lib/realtime";

describe("createRealtime / getRealtime", () => {
  it("uses the memory driver by default, once per process", () => {
    expect(createRealtime(parseConfig({})).name).toBe("memory");
    expect(getRealtime()).toBe(getRealtime());
    expect(getRealtime().subscribe).toBeTypeOf("function");
  });

  it("defaults to postgres when DATABASE_URL is set, which that driver needs", () => {
    const databaseUrl = "postgres://postgres@127.0.0.1:5432/app";
    expect(parseConfig({ DATABASE_URL: databaseUrl }).REALTIME_DRIVER).toBe("postgres");
    expect(parseConfig({ DATABASE_URL: databaseUrl, REALTIME_DRIVER: "redis" }).REALTIME_DRIVER).toBe("redis");
    expect(parseConfig({ REALTIME_DRIVER: "redis" }).REDIS_URL).toBe("redis://127.0.0.1:6379");
    const config = parseConfig({ REALTIME_DRIVER: "postgres" });
    expect(() => createRealtime(config)).toThrow(new RealtimeNotConfiguredError("REALTIME_DRIVER=postgres needs DATABASE_URL."));
  });

  it("builds the pusher driver from PUSHER_* and registers the secret for redaction", () => {
    const secret = "pusher-secret-for-index-test";
    const realtime = createRealtime(
      parseConfig({ REALTIME_DRIVER: "pusher", PUSHER_APP_ID: "1", PUSHER_KEY: "k", PUSHER_SECRET: secret, PUSHER_CLUSTER: "eu" }),
    );
    expect(realtime.name).toBe("pusher");
    expect(realtime.subscribe).toBeUndefined();
    expect(redactSecrets(`signed with ${secret}`)).not.toContain(secret);
  });

  it("names every missing PUSHER_* variable", () => {
    const config = parseConfig({ REALTIME_DRIVER: "pusher", PUSHER_APP_ID: "1", PUSHER_SECRET: "s3cr3t-value" });
    expect(() => createRealtime(config)).toThrow(RealtimeNotConfiguredError);
    expect(() => createRealtime(config)).toThrow("REALTIME_DRIVER=pusher needs PUSHER_KEY, PUSHER_CLUSTER.");
  });
});
