import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_SECRET_HEADER, FAULT_HEADER } from "@/lib/emulator";
import { FaultController, HANG_LIMIT_MS } from "@/lib/emulator/faults";
import { emulatorClient } from "./helpers";

describe("fault injection", () => {
  const { call, json, identity, teamBearer, emulator, close } = emulatorClient();
  afterAll(close);
  let createPath = "";
  const create = async (headers: Record<string, string> = {}) => {
    createPath ||= `/v1/teams/${(await (await call("/v1/token_details", { headers: { authorization: teamBearer } })).json()).teamId}/create_project`;
    return call(createPath, { ...json({ projectName: "faulty" }), headers: { "content-type": "application/json", authorization: teamBearer, ...headers } });
  };

  afterEach(() => {
    emulator.faults.clear();
    vi.useRealTimers();
  });

  it("applies a per-request X-Emulator-Fault only with the admin secret", async () => {
    const fault = JSON.stringify({ status: 503, code: "OptimisticConcurrencyControlFailure" });
    const denied = await create({ [FAULT_HEADER]: fault });
    expect(denied.status).toBe(403);
    expect((await denied.json()).code).toBe("EmulatorAdminRequired");
    expect((await create({ [FAULT_HEADER]: fault, [ADMIN_SECRET_HEADER]: "guess" })).status).toBe(403);
    const injected = await create({ [FAULT_HEADER]: fault, [ADMIN_SECRET_HEADER]: identity.adminSecret });
    expect(injected.status).toBe(503);
    expect(await injected.json()).toEqual({ code: "OptimisticConcurrencyControlFailure", message: expect.any(String) });
    expect((await create({ [FAULT_HEADER]: "{oops", [ADMIN_SECRET_HEADER]: identity.adminSecret })).status).toBe(400);
    expect((await create()).status).toBe(200);
  });

  it("queues rules through the admin endpoint for the next N matching calls", async () => {
    const admin = { [ADMIN_SECRET_HEADER]: identity.adminSecret, "content-type": "application/json" };
    expect((await call("/_admin/faults", { method: "POST", body: JSON.stringify({ status: 500 }) })).status).toBe(403);
    const added = await call("/_admin/faults", { method: "POST", headers: admin, body: JSON.stringify({ path: "create_project", status: 400, code: "ProjectQuotaReached", times: 2 }) });
    expect(added.status).toBe(204);
    expect((await call("/v1/deployments/x/create_deploy_key", json({ name: "k" }, teamBearer))).status).toBe(404);
    expect((await (await create()).json()).code).toBe("ProjectQuotaReached");
    expect((await (await create()).json()).code).toBe("ProjectQuotaReached");
    expect((await create()).status).toBe(200);

    await call("/_admin/faults", { method: "POST", headers: admin, body: JSON.stringify({ status: 500, times: 5 }) });
    expect((await call("/_admin/faults/clear", { method: "POST", headers: admin })).status).toBe(204);
    expect((await create()).status).toBe(200);
    expect((await call("/_admin/faults", { method: "POST", headers: admin, body: JSON.stringify({ status: 200 }) })).status).toBe(400);
  });

  it("adds latency, then handles the request", async () => {
    vi.useFakeTimers();
    emulator.faults.add({ latencyMs: 20 });
    let settled = false;
    const pending = create().then((response) => {
      settled = true;
      return response;
    });
    await vi.advanceTimersByTimeAsync(19);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    vi.useRealTimers();
    expect((await pending).status).toBe(200);
  });

  it("hangs until the caller aborts", async () => {
    emulator.faults.add({ hang: true });
    const controller = new AbortController();
    const pending = emulator.handle(new Request("http://127.0.0.1/emulator/v1/teams/1/create_project", { method: "POST", signal: controller.signal }));
    controller.abort();
    const response = await pending;
    expect(response.status).toBe(504);
  });

  it("ends a forgotten hang after the limit", async () => {
    vi.useFakeTimers();
    emulator.faults.add({ hang: true });
    const pending = create();
    await vi.advanceTimersByTimeAsync(HANG_LIMIT_MS);
    expect((await pending).status).toBe(504);
  });
});

describe("FaultController", () => {
  it("matches by path substring, in order, and consumes uses", () => {
    const faults = new FaultController();
    faults.add({ path: "query", status: 500, times: 2 });
    faults.add({ status: 429 });
    expect(faults.take("/api/query", "deployment")?.status).toBe(500);
    expect(faults.take("/v1/teams/1/create_project", "management")?.status).toBe(429);
    expect(faults.take("/v1/teams/1/create_project", "management")).toBeUndefined();
    expect(faults.take("/api/query", "deployment")?.status).toBe(500);
    expect(faults.take("/api/query", "deployment")).toBeUndefined();
    expect(() => faults.add({ status: 200 })).toThrow();
  });

  it("matches by API when the rule names one", () => {
    const faults = new FaultController();
    faults.add({ api: "management", status: 503, times: 2 });
    expect(faults.take("/api/v1/list_environment_variables", "deployment")).toBeUndefined();
    expect(faults.take("/v1/token_details", "management")?.status).toBe(503);
  });
});
