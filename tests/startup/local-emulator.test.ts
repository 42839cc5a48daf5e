import { afterAll, describe, expect, it, vi } from "vitest";
import { reloadConfig } from "@/lib/config";
import { getDefaultEmulator } from "@/lib/emulator";
import { resetProcessSingleton } from "@/lib/singletons";
import { startServer } from "@/lib/startup";

describe("server start in local mode", () => {
  afterAll(async () => {
    await resetProcessSingleton("emulator");
    delete process.env.BACKEND_PROVIDER;
    reloadConfig();
  });

  it("prints the emulator's provision host, team token and team id, and reopens stored deployments", async () => {
    process.env.BACKEND_PROVIDER = "local";
    const config = reloadConfig();
    const printed: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
    try {
      await startServer();
    } finally {
      spy.mockRestore();
    }
    const { identity } = getDefaultEmulator();
    const text = printed.join("\n");
    const teamId = /Team id: (\d+) {2}\(slug local-team\)/.exec(text)?.[1];
    expect(text).toContain(`CONVEX_PROVISION_HOST=${config.PUBLIC_BASE_URL}/emulator`);
    expect(text).toContain(`Team token: ${identity.teamToken}`);
    const details = await getDefaultEmulator().handle(
      new Request(`${config.PUBLIC_BASE_URL}/emulator/v1/token_details`, { headers: { authorization: `Bearer ${identity.teamToken}` } }),
    );
    expect(String((await details.json()).teamId)).toBe(teamId);
  });
});
