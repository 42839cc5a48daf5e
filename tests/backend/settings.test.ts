import { afterAll, describe, expect, it } from "vitest";
import { provisionManagedProject, queryEnvVariable } from "@/lib/backend";
import { getBackendSettings, isManagedModeConfigured } from "@/lib/cloud/backend-settings";
import { parseConfig } from "@/lib/config";
import { getEmulatorIdentity } from "@/lib/emulator";
import { startEmulatorServer, type EmulatorServer } from "@/lib/emulator/server";
import { redactSecrets } from "@/lib/log";

const env = (extra: Record<string, string>) => parseConfig({ DATA_DIR: process.env.DATA_DIR, ...extra });

describe("getBackendSettings", () => {
  let server: EmulatorServer | undefined;
  afterAll(() => server?.close());

  it("local: the emulator under PUBLIC_BASE_URL with its built-in team and OAuth app", () => {
    const config = env({ BACKEND_PROVIDER: "local", PUBLIC_BASE_URL: "http://localhost:3000/", BACKEND_TEAM_SCOPED_TOKEN: "ignored-locally" });
    const identity = getEmulatorIdentity(config);
    const settings = getBackendSettings(config);
    expect(settings).toEqual({
      provider: "local",
      provisionHost: "http://localhost:3000/emulator",
      dashboardHost: "http://localhost:3000/emulator/dashboard",
      timeoutMs: 30_000,
      teamScopedToken: identity.teamToken,
      teamSlug: "local-team",
      oauthClientId: identity.oauthClientId,
      oauthClientSecret: identity.oauthClientSecret,
    });
    expect(isManagedModeConfigured(settings)).toBe(true);
    // Registered for redaction: a log line cannot carry them.
    expect(redactSecrets(`token ${identity.teamToken} secret ${identity.oauthClientSecret}`)).not.toMatch(/emu_/);
  });

  it("hosted: the hosted hosts by default, credentials only from the environment", () => {
    const bare = getBackendSettings(env({ BACKEND_PROVIDER: "hosted" }));
    expect(bare).toMatchObject({ provisionHost: "https://api.convex.dev", dashboardHost: "https://dashboard.convex.dev", teamScopedToken: undefined, teamSlug: undefined });
    expect(isManagedModeConfigured(bare)).toBe(false);

    const configured = getBackendSettings(
      env({
        BACKEND_PROVIDER: "hosted",
        BACKEND_TEAM_SCOPED_TOKEN: "hosted-team-token-1",
        BACKEND_TEAM_SLUG: "acme",
        PROVISION_HOST: "https://api.example.test",
        DASHBOARD_HOST: "https://dash.example.test",
        BACKEND_API_TIMEOUT_MS: "5000",
      }),
    );
    expect(configured).toMatchObject({
      provisionHost: "https://api.example.test",
      dashboardHost: "https://dash.example.test",
      teamScopedToken: "hosted-team-token-1",
      teamSlug: "acme",
      timeoutMs: 5000,
    });
    expect(isManagedModeConfigured(configured)).toBe(true);
  });

  it("local mode provisions offline with no configuration but PUBLIC_BASE_URL", async () => {
    server = await startEmulatorServer();
    const settings = getBackendSettings(env({ PUBLIC_BASE_URL: `http://127.0.0.1:${server.port}` }));
    if (!isManagedModeConfigured(settings)) throw new Error("managed mode should be configured locally");
    const project = await provisionManagedProject({ teamScopedToken: settings.teamScopedToken, teamSlug: settings.teamSlug, projectName: "offline" }, settings);
    // Deployments live at the root of their own loopback listener, not below the provision host.
    expect(project.deploymentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await queryEnvVariable(project, "SITE_URL", settings)).toBeNull();
  });
});
