import net from "node:net";
import { afterAll, describe, expect, it, vi } from "vitest";
import { getConfig } from "@/lib/config";
import { createEmulatorTeam } from "@/lib/emulator";
import { getStore } from "@/lib/store";
import { emulatorClient } from "./helpers";

const QUERY = "_system/cli/queryEnvironmentVariables:get";

describe("emulated deployment API (at the root of each deployment's listener)", () => {
  const { call, json, identity, provision, close } = emulatorClient();
  afterAll(close);

  const send = (url: string, path: string, key: string | undefined, init: RequestInit = {}) =>
    fetch(new URL(path, url), { ...init, headers: { "content-type": "application/json", ...(key && { authorization: `Convex ${key}` }), ...init.headers } });
  const update = (url: string, key: string | undefined, changes: unknown, path = "/api/v1/update_environment_variables") =>
    send(url, path, key, { method: "POST", body: JSON.stringify({ changes }) });
  const list = async (url: string, key: string) => (await send(url, "/api/v1/list_environment_variables", key)).json();
  const query = (url: string, key: string, body: unknown) => send(url, "/api/query", key, { method: "POST", body: JSON.stringify(body) });

  it("sets, lists and deletes variables; an absent or null value deletes; the CLI's unversioned path works too", async () => {
    const { created, deployKey } = await provision("vars");
    const url = created.deploymentUrl;
    const set = await update(url, deployKey, [{ name: "A", value: "1" }, { name: "B_2", value: "two" }, { name: "C", value: "3" }]);
    expect(set.status).toBe(200);
    expect(await set.text()).toBe("");
    expect(await list(url, deployKey)).toEqual({ environmentVariables: { A: "1", B_2: "two", C: "3" } });

    expect((await update(url, deployKey, [{ name: "A" }, { name: "C", value: null }], "/api/update_environment_variables")).status).toBe(200);
    expect(await list(url, deployKey)).toEqual({ environmentVariables: { B_2: "two" } });
    const read = await query(url, deployKey, { path: QUERY, format: "convex_encoded_json", args: [{ name: "B_2" }] });
    expect(await read.json()).toEqual({ status: "success", value: { name: "B_2", value: "two" }, logLines: [] });
  });

  it("answers get_canonical_urls and deployment_info for its own deployment", async () => {
    const { created, deployKey } = await provision("info");
    const urls = await (await send(created.deploymentUrl, "/api/v1/get_canonical_urls", deployKey)).json();
    expect(urls).toEqual({ convexCloudUrl: created.deploymentUrl, convexSiteUrl: created.deploymentUrl });
    const info = await (await send(created.deploymentUrl, "/api/v1/deployment_info", deployKey)).json();
    expect(info).toEqual({
      kind: "cloud",
      id: expect.any(Number),
      teamId: expect.any(Number),
      projectId: created.id,
      projectName: "info",
      projectSlug: "info",
      deploymentType: "dev",
      reference: created.deploymentName,
    });
  });

  it("accepts the team token wherever the hosted deployment does: bare and as project:<team>:<project>|<token>", async () => {
    const { created } = await provision("team-token");
    const projectKey = `project:${identity.teamSlug}:${created.slug}|${identity.teamToken}`;
    for (const key of [identity.teamToken, projectKey]) {
      expect((await update(created.deploymentUrl, key, [{ name: "T", value: "1" }])).status).toBe(200);
    }
    expect(await list(created.deploymentUrl, projectKey)).toEqual({ environmentVariables: { T: "1" } });
  });

  it("refuses a missing key, keys of other deployments and other teams' tokens with 401 in the hosted shape", async () => {
    const { created, deployKey } = await provision("guarded");
    const other = await provision("other");
    const { token: foreignTeamToken } = await createEmulatorTeam(await getStore(), { slug: "foreign-team" });
    const missing = await update(created.deploymentUrl, undefined, []);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ code: "BadAdminKey", message: expect.any(String) });
    const secret = deployKey.slice(deployKey.indexOf("|") + 1);
    const forged = [
      other.deployKey,
      // The right secret under another deployment's name, and under another project's prefix.
      `dev:${other.created.deploymentName}|${secret}`,
      `project:${identity.teamSlug}:other|${identity.teamToken}`,
      foreignTeamToken,
    ];
    for (const key of forged) {
      const response = await update(created.deploymentUrl, key, [{ name: "X", value: "1" }]);
      expect(response.status).toBe(401);
      const body = await response.json();
      expect(body).toEqual({
        code: "BadDeployKey",
        message: `The provided deploy key was invalid for deployment '${created.deploymentName}'. Double check that the environment this key was generated for matches the desired deployment.`,
      });
    }
    const bearer = await send(created.deploymentUrl, "/api/v1/list_environment_variables", undefined, { headers: { authorization: `Bearer ${deployKey}` } });
    expect(bearer.status).toBe(401);
  });

  it("applies the upstream limits on names and values, atomically", async () => {
    const { created, deployKey } = await provision("limits");
    const cases: [unknown, string][] = [
      [[{ name: "9LIVES", value: "x" }], "EnvironmentVariableNameInvalid"],
      [[{ name: "A".repeat(257), value: "x" }], "EnvironmentVariableNameTooLong"],
      [[{ name: "OK", value: "x" }, { name: "BIG", value: "x".repeat(8 * 1024 + 1) }], "EnvironmentVariableValueTooLarge"],
    ];
    for (const [changes, code] of cases) {
      const response = await update(created.deploymentUrl, deployKey, changes);
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe(code);
    }
    expect(await list(created.deploymentUrl, deployKey)).toEqual({ environmentVariables: {} });
  });

  it("answers failed function calls with 560 and the UDF error shape, like hosted deployments", async () => {
    const { created, deployKey } = await provision("functions");
    const unknown = await query(created.deploymentUrl, deployKey, { path: "messages:list", args: [{}] });
    expect(unknown.status).toBe(560);
    expect(await unknown.json()).toEqual({ status: "error", errorMessage: expect.stringContaining("Could not find public function for 'messages:list'"), errorData: null, logLines: [] });
    const badArgs = await query(created.deploymentUrl, deployKey, { path: QUERY, args: [] });
    expect(badArgs.status).toBe(560);
    expect(await badArgs.json()).toMatchObject({ status: "error", errorMessage: expect.stringContaining("ArgumentValidationError") });
  });

  it("keeps every deployment's URL across restarts, a fixed port of EMULATOR_PORT_RANGE; a port another process holds at a restart answers once it is free", { timeout: 120_000 }, async () => {
    const before = emulatorClient();
    const [kept, blocked] = [await before.provision("stable-a"), await before.provision("stable-b")];
    const { first, last } = getConfig().EMULATOR_PORT_RANGE;
    const portOf = ({ created }: { created: { deploymentUrl: string } }) => Number(new URL(created.deploymentUrl).port);
    for (const provisioned of [kept, blocked]) expect(portOf(provisioned)).toSatisfy((port: number) => port >= first && port <= last);
    await before.close();

    // Another process takes the second deployment's port while the server is down.
    const squatter = net.createServer((socket) => socket.end("HTTP/1.1 418 I'm a teapot\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"));
    await new Promise<void>((resolve) => squatter.listen(portOf(blocked), "127.0.0.1", resolve));
    const after = emulatorClient();
    try {
      await after.emulator.start();
      const info = async ({ created, deployKey }: typeof kept) => send(created.deploymentUrl, "/api/v1/deployment_info", deployKey);
      expect(await (await info(kept)).json()).toMatchObject({ reference: kept.created.deploymentName });
      expect((await info(blocked)).status).toBe(418);
      // The port is free once the listening socket closed (the client's kept-alive connection may linger).
      squatter.close();
      // The same URL, served by the emulator once the port is free.
      await vi.waitFor(async () => expect(await (await info(blocked)).json()).toMatchObject({ reference: blocked.created.deploymentName }), { timeout: 60_000, interval: 250 });
    } finally {
      if (squatter.listening) squatter.close();
      await after.close();
    }
  });

  it("deleting the project closes its listener and revokes its keys", async () => {
    const { created, deployKey } = await provision("revoked");
    await call(`/v1/projects/${created.id}/delete`, { method: "POST", headers: { authorization: `Bearer ${identity.teamToken}` } });
    await expect(update(created.deploymentUrl, deployKey, [{ name: "A", value: "1" }])).rejects.toThrow();
    expect((await call(`/v1/deployments/${created.deploymentName}/create_deploy_key`, json({ name: "x" }, `Bearer ${identity.teamToken}`))).status).toBe(404);
  });
});
