import { describe, expect, it } from "vitest";
import { formatAdminKey, parseAdminKey } from "@/lib/backend";
import { emulatorClient } from "./helpers";

const QUERY = "_system/cli/queryEnvironmentVariables:get";

describe("emulated deployment API", () => {
  const { call, json, identity, provision } = emulatorClient();

  const update = (name: string, key: string | undefined, changes: unknown, version = "") =>
    call(`/deployments/${name}/api${version}/update_environment_variables`, json({ changes }, key && `Convex ${key}`));
  const query = async (name: string, key: string, variable: string) =>
    (await call(`/deployments/${name}/api/query`, json({ path: QUERY, format: "convex_encoded_json", args: [{ name: variable }] }, `Convex ${key}`))).json();

  it("sets, reads and deletes variables with the deployment's own key (scheme case-insensitive)", async () => {
    const { deployment } = await provision("vars");
    const name = deployment.deploymentName;
    const set = await update(name, deployment.adminKey, [{ name: "A", value: "1" }, { name: "B_2", value: "two" }]);
    expect(set.status).toBe(200);
    expect(await set.text()).toBe("");
    expect(await query(name, deployment.adminKey, "A")).toEqual({ status: "success", value: { name: "A", value: "1" } });

    const viaV1 = await call(`/deployments/${name}/api/v1/update_environment_variables`, json({ changes: [{ name: "A", value: null }] }, `convex ${deployment.adminKey}`));
    expect(viaV1.status).toBe(200);
    expect(await query(name, deployment.adminKey, "A")).toEqual({ status: "success", value: null });
    expect(await query(name, deployment.adminKey, "B_2")).toMatchObject({ value: { value: "two" } });
  });

  it("refuses a missing key (401), the team token and other deployments' keys (403 BadDeployKey)", async () => {
    const { deployment } = await provision("guarded");
    const { deployment: other } = await provision("other");
    const name = deployment.deploymentName;
    expect((await update(name, undefined, [])).status).toBe(401);
    const parts = parseAdminKey(deployment.adminKey)!;
    const forged = [
      identity.teamToken,
      formatAdminKey({ ...parts, token: identity.teamToken }),
      other.adminKey,
      // The right secret under another project's prefix.
      formatAdminKey({ ...parts, projectSlug: "other" }),
    ];
    for (const key of forged) {
      const response = await update(name, key, [{ name: "X", value: "1" }]);
      expect(response.status).toBe(403);
      const body = await response.json();
      expect(body).toEqual({ code: "BadDeployKey", message: expect.stringContaining(name) });
      expect(JSON.stringify(body)).not.toContain(identity.teamToken);
    }
    const bearer = await call(`/deployments/${name}/api/query`, json({ path: QUERY, args: [{ name: "X" }] }, `Bearer ${deployment.adminKey}`));
    expect(bearer.status).toBe(401);
  });

  it("applies the upstream limits on names and values, atomically", async () => {
    const { deployment } = await provision("limits");
    const name = deployment.deploymentName;
    const cases: [unknown, string][] = [
      [[{ name: "9LIVES", value: "x" }], "EnvironmentVariableNameInvalid"],
      [[{ name: "A".repeat(257), value: "x" }], "EnvironmentVariableNameTooLong"],
      [[{ name: "OK", value: "x" }, { name: "BIG", value: "x".repeat(8 * 1024 + 1) }], "EnvironmentVariableValueTooLarge"],
    ];
    for (const [changes, code] of cases) {
      const response = await update(name, deployment.adminKey, changes);
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe(code);
    }
    expect(await query(name, deployment.adminKey, "OK")).toEqual({ status: "success", value: null });
  });

  it("answers unknown deployments and functions like upstream", async () => {
    const { deployment } = await provision("functions");
    expect((await update("no-such-deployment-1", deployment.adminKey, [])).status).toBe(404);
    const unknown = await call(`/deployments/${deployment.deploymentName}/api/query`, json({ path: "messages:list", args: [{}] }, `Convex ${deployment.adminKey}`));
    expect(await unknown.json()).toEqual({ code: "FunctionNotFound", message: expect.any(String) });
    const badArgs = await call(`/deployments/${deployment.deploymentName}/api/query`, json({ path: QUERY, args: [] }, `Convex ${deployment.adminKey}`));
    expect(badArgs.status).toBe(400);
    expect((await badArgs.json()).status).toBe("error");
  });

  it("deleting the project revokes its keys", async () => {
    const { created, deployment } = await provision("revoked");
    await call(`/v1/projects/${created.projectId}/delete`, { method: "POST", headers: { authorization: `Bearer ${identity.teamToken}` } });
    const response = await update(deployment.deploymentName, deployment.adminKey, [{ name: "A", value: "1" }]);
    expect(await response.json()).toEqual({ code: "DeploymentNotFound", message: expect.any(String) });
  });
});
