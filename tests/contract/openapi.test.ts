import { describe, expect, it } from "vitest";
import { createEmulator, type EmulatorExchange } from "@/lib/emulator";
import { checkExchange } from "./openapi";

/** The contract check itself: it must catch what it is there to catch. */
const exchange = (overrides: Partial<EmulatorExchange>): EmulatorExchange => ({
  api: "management",
  method: "GET",
  path: "/v1/token_details",
  query: new URLSearchParams(),
  requestBody: "",
  status: 200,
  responseBody: JSON.stringify({ type: "teamToken", id: 1, teamId: 1, name: "t", createTime: 1 }),
  ...overrides,
});

describe("OpenAPI contract check", () => {
  it("accepts documented exchanges of both APIs, and the CLI's unversioned alias", () => {
    expect(checkExchange(exchange({}))).toEqual([]);
    const update = { api: "deployment" as const, method: "POST", requestBody: JSON.stringify({ changes: [{ name: "A" }] }), responseBody: "" };
    expect(checkExchange(exchange({ ...update, path: "/api/v1/update_environment_variables" }))).toEqual([]);
    expect(checkExchange(exchange({ ...update, path: "/api/update_environment_variables" }))).toEqual([]);
  });

  it("fails on a served path no document describes, but not on the emulator refusing it", () => {
    expect(checkExchange(exchange({ path: "/api/create_project", method: "POST" }))).toEqual([expect.stringContaining("not in the management OpenAPI document")]);
    expect(checkExchange(exchange({ path: "/api/create_project", method: "POST", status: 404, responseBody: JSON.stringify({ code: "NotFound", message: "x" }) }))).toEqual([]);
  });

  it("fails on bodies, parameters and statuses that break the schemas", () => {
    expect(checkExchange(exchange({ responseBody: JSON.stringify({ type: "teamToken", teamId: "1" }) }))).toEqual([expect.stringContaining("response body")]);
    const create = { method: "POST", path: "/v1/teams/abc/create_project", responseBody: JSON.stringify({ projectId: 1, id: 1, slug: "s" }) };
    expect(checkExchange(exchange({ ...create, requestBody: JSON.stringify({ projectName: "x" }) }))).toEqual([expect.stringContaining("path parameter team_id=abc")]);
    // `Format: int64` in the package's types: an integer, as the published document says.
    expect(checkExchange(exchange({ ...create, path: "/v1/teams/1.5/create_project", requestBody: JSON.stringify({ projectName: "x" }) }))).toEqual([
      expect.stringContaining("path parameter team_id=1.5"),
    ]);
    expect(checkExchange(exchange({ ...create, path: "/v1/teams/1/create_project", requestBody: JSON.stringify({ projectName: "x", team: "acme" }) }))).toEqual([
      expect.stringContaining("request body"),
    ]);
    expect(checkExchange(exchange({ query: new URLSearchParams("extra=1") }))).toEqual([expect.stringContaining("undocumented query parameter extra")]);
    expect(checkExchange(exchange({ status: 201 }))).toEqual([expect.stringContaining("status 201 is not documented")]);
  });

  it("checks the push API against the convex CLI's own schemas of it", () => {
    const push = { api: "deployment" as const, method: "POST", path: "/api/deploy2/wait_for_schema", requestBody: JSON.stringify({ adminKey: "k", schemaChange: {}, timeoutMs: 1, dryRun: false }) };
    expect(checkExchange(exchange({ ...push, responseBody: JSON.stringify({ type: "complete" }) }))).toEqual([]);
    expect(checkExchange(exchange({ ...push, responseBody: JSON.stringify({ type: "done" }) }))).toEqual([expect.stringContaining("response body")]);
    const finish = { ...push, path: "/api/deploy2/finish_push", responseBody: JSON.stringify({ authDiff: { added: [], removed: [] }, definitionDiffs: {}, componentDiffs: {} }) };
    expect(checkExchange(exchange(finish))).toEqual([]);
    expect(checkExchange(exchange({ ...finish, responseBody: JSON.stringify({ definitionDiffs: {}, componentDiffs: {} }) }))).toEqual([expect.stringContaining("response body: authDiff")]);
    const start = { ...push, path: "/api/deploy2/start_push", responseBody: "{}" };
    expect(checkExchange(exchange({ ...start, requestBody: JSON.stringify({ adminKey: "k" }) }))).toEqual(expect.arrayContaining([expect.stringContaining("request body: dryRun")]));
    expect(checkExchange(exchange({ ...finish, status: 400, responseBody: JSON.stringify({ code: "InvalidModules", message: "m" }) }))).toEqual([]);
  });

  it("requires the hosted error shape {code, message} on failures", () => {
    expect(checkExchange(exchange({ status: 401, responseBody: JSON.stringify({ code: "AccessTokenInvalid", message: "m" }) }))).toEqual([]);
    expect(checkExchange(exchange({ status: 401, responseBody: JSON.stringify({ error: "nope" }) }))).toEqual([expect.stringContaining("is not {code, message}")]);
  });

  it("sees what the emulator answers: both sides of each exchange reach onExchange", async () => {
    const seen: EmulatorExchange[] = [];
    const emulator = createEmulator({ onExchange: (item) => seen.push(item) });
    await emulator.handle(new Request("http://127.0.0.1/emulator/v1/token_details?x=1", { headers: { authorization: `Bearer ${emulator.identity.teamToken}` } }));
    expect(seen).toEqual([
      { api: "management", method: "GET", path: "/v1/token_details", query: new URLSearchParams("x=1"), requestBody: "", status: 200, responseBody: expect.stringContaining('"teamToken"') },
    ]);
    expect(checkExchange(seen[0])).toEqual(["management GET /v1/token_details: undocumented query parameter x"]);
    await emulator.close();
  });
});
