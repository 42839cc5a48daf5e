import { afterEach, describe, expect, it } from "vitest";
import { GET, POST } from "@/app/emulator/[...path]/route";
import { reloadConfig } from "@/lib/config";
import { getDefaultEmulator } from "@/lib/emulator";

const BASE = "http://localhost:3000/emulator";

describe("app/emulator route", () => {
  afterEach(() => {
    delete process.env.BACKEND_PROVIDER;
    delete process.env.PUBLIC_BASE_URL;
    reloadConfig();
  });

  it("does not exist when the backend is hosted", async () => {
    process.env.BACKEND_PROVIDER = "hosted";
    reloadConfig();
    const response = await POST(new Request(`${BASE}/api/create_project`, { method: "POST" }));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "not_found", message: "Not found." } });
  });

  it("forwards to the installation's emulator, with deployment URLs under PUBLIC_BASE_URL", async () => {
    process.env.PUBLIC_BASE_URL = "https://public.example";
    reloadConfig();
    const { identity } = getDefaultEmulator();
    const created = await POST(
      new Request(`${BASE}/api/create_project`, {
        method: "POST",
        headers: { authorization: `Bearer ${identity.teamToken}`, "content-type": "application/json" },
        body: JSON.stringify({ team: identity.teamSlug, projectName: "routed", deploymentType: "dev" }),
      }),
    );
    expect(created.status).toBe(200);
    expect((await created.json()).prodUrl).toMatch(/^https:\/\/public\.example\/emulator\/deployments\/[a-z]+-[a-z]+-\d{3}$/);

    const page = await GET(new Request(`${BASE}/dashboard/oauth/authorize/team?client_id=${identity.oauthClientId}&redirect_uri=https://a.example/cb&response_type=code`));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});
