import { afterEach, describe, expect, it } from "vitest";
import { GET, POST } from "@/app/emulator/[...path]/route";
import { reloadConfig } from "@/lib/config";
import { getDefaultEmulator } from "@/lib/emulator";
import { resetProcessSingleton } from "@/lib/singletons";

const BASE = "http://localhost:3000/emulator";

describe("app/emulator route", () => {
  afterEach(async () => {
    delete process.env.BACKEND_PROVIDER;
    delete process.env.PUBLIC_BASE_URL;
    reloadConfig();
    await resetProcessSingleton("emulator");
  });

  it("does not exist when the backend is hosted", async () => {
    process.env.BACKEND_PROVIDER = "hosted";
    reloadConfig();
    const response = await POST(new Request(`${BASE}/v1/teams/1/create_project`, { method: "POST" }));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "not_found", message: "Not found." } });
  });

  it("forwards to the installation's emulator; its deployments listen on loopback ports, restored at start", async () => {
    process.env.PUBLIC_BASE_URL = "https://public.example";
    reloadConfig();
    const { identity } = getDefaultEmulator();
    const bearer = { authorization: `Bearer ${identity.teamToken}`, "content-type": "application/json" };
    const { teamId } = await (await GET(new Request(`${BASE}/v1/token_details`, { headers: bearer }))).json();
    const created = await POST(
      new Request(`${BASE}/v1/teams/${teamId}/create_project`, { method: "POST", headers: bearer, body: JSON.stringify({ projectName: "routed", deploymentType: "dev" }) }),
    );
    expect(created.status).toBe(200);
    const { deploymentName, deploymentUrl } = await created.json();
    expect(deploymentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { deployKey } = await (
      await POST(new Request(`${BASE}/v1/deployments/${deploymentName}/create_deploy_key`, { method: "POST", headers: bearer, body: JSON.stringify({ name: "k" }) }))
    ).json();
    const info = () => fetch(`${deploymentUrl}/api/v1/deployment_info`, { headers: { authorization: `Convex ${deployKey}` } });
    expect((await info()).status).toBe(200);

    // A restart: the listener goes away with the emulator and comes back on the same port.
    await resetProcessSingleton("emulator");
    await expect(info()).rejects.toThrow();
    expect((await getDefaultEmulator().start()).deployments).toBeGreaterThanOrEqual(1);
    expect(await (await info()).json()).toMatchObject({ kind: "cloud", projectSlug: "routed" });

    const page = await GET(new Request(`${BASE}/dashboard/oauth/authorize/team?client_id=${identity.oauthClientId}&redirect_uri=https://a.example/cb&response_type=code`));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});
