import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionManagedProject, type ProvisionedBackendProject } from "@/lib/backend";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";
import { convexAppDir, runConvexCli } from "./helpers";

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  messages: defineTable({ author: v.string(), body: v.string() }),
  drafts: defineTable({ body: v.string() }),
});
`;

const MESSAGES = `import { v } from "convex/values";
import { internalMutation, query } from "./_generated/server";

export const list = query({ args: {}, handler: (ctx) => ctx.db.query("messages").order("asc").collect() });

export const send = internalMutation({
  args: { author: v.string(), body: v.string() },
  handler: (ctx, args) => ctx.db.insert("messages", args),
});
`;

/**
 * The `convex` CLI's data plane against an emulated deployment, with the real CLI: `convex run`
 * (its `/api/function`), `convex data` and `convex data <table>` (the system queries
 * `_system/cli/tables` and `tableData` over the sync socket), `convex function-spec`
 * (`modules:apiSpec`, `convexUrl:cloudUrl`). Each finishes; none hangs.
 */
describe("the convex CLI's data commands against the emulated deployment", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let cwd: string;
  const cli = (args: string[]) => runConvexCli(cwd, args, { url: project.deploymentUrl, adminKey: project.token });

  beforeAll(async () => {
    emulator = await startTestEmulator({ functionTimeoutMs: { query: 20_000, mutation: 20_000, action: 60_000 }, analyseTimeoutMs: 30_000 });
    project = await provisionManagedProject({ ...emulator.team, projectName: "cli data app" }, emulator.management);
    cwd = convexAppDir({ "schema.ts": SCHEMA, "messages.ts": MESSAGES });
    const pushed = await cli(["dev", "--once", "--typecheck", "disable"]);
    expect(pushed.output).toContain("Convex functions ready!");
  }, 600_000);
  afterAll(async () => {
    await emulator?.server.close();
    if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
  });

  /** The document `convex run` inserted, read back by the later commands. */
  let sentId: string;
  const document = () => ({ _id: sentId, _creationTime: expect.any(Number), author: "ada", body: "hello from the CLI" });

  it("convex run calls an internal mutation, then a query", { timeout: 600_000 }, async () => {
    const sent = await cli(["run", "messages:send", JSON.stringify({ author: "ada", body: "hello from the CLI" })]);
    expect(sent.code, sent.output).toBe(0);
    sentId = JSON.parse(sent.stdout.trim());
    expect(sentId).toMatch(/messages$/);

    const listed = await cli(["run", "messages:list"]);
    expect(listed.code, listed.output).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([document()]);
  });

  it("convex run of a missing function fails with upstream's wording and lists the functions", { timeout: 600_000 }, async () => {
    const missing = await cli(["run", "messages:nothing"]);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain("Could not find function for 'messages:nothing'");
    expect(missing.output).toContain("messages:list");
  });

  it("convex data lists the tables, and a table's documents", { timeout: 600_000 }, async () => {
    const tables = await cli(["data"]);
    expect(tables.code, tables.output).toBe(0);
    expect(tables.stdout.trim().split("\n")).toEqual(["drafts", "messages"]);

    const rows = await cli(["data", "messages", "--format", "jsonl"]);
    expect(rows.code, rows.output).toBe(0);
    expect(JSON.parse(rows.stdout.trim())).toEqual(document());
  });

  it("convex function-spec prints the deployment's URL and every function with its validators", { timeout: 600_000 }, async () => {
    const spec = await cli(["function-spec"]);
    expect(spec.code, spec.output).toBe(0);
    const printed = JSON.parse(spec.stdout);
    expect(printed.url).toBe(project.deploymentUrl);
    expect(printed.functions).toEqual([
      { identifier: "messages.js:list", functionType: "Query", visibility: { kind: "public" }, args: { type: "object", value: {} }, returns: { type: "any" } },
      {
        identifier: "messages.js:send",
        functionType: "Mutation",
        visibility: { kind: "internal" },
        args: { type: "object", value: { author: { fieldType: { type: "string" }, optional: false }, body: { fieldType: { type: "string" }, optional: false } } },
        returns: { type: "any" },
      },
    ]);
  });
});
