import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionManagedProject, type ProvisionedBackendProject } from "@/lib/backend";
import { findPush, listPushModules } from "@/lib/emulator/store";
import { getStore } from "@/lib/store";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";

const CONVEX_BIN = path.resolve("node_modules/.bin/convex");

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  messages: defineTable({ author: v.string(), body: v.string() }).index("by_author", ["author"]),
});
`;

const MESSAGES = `import { v } from "convex/values";
import { internalMutation, mutation, query } from "./_generated/server";

export const list = query({
  args: {},
  handler: async (ctx) => ctx.db.query("messages").collect(),
});

export const send = mutation({
  args: { author: v.string(), body: v.string() },
  handler: async (ctx, args) => ctx.db.insert("messages", args),
});

export const clear = internalMutation({
  args: {},
  handler: async (ctx) => {
    for (const message of await ctx.db.query("messages").collect()) await ctx.db.delete(message._id);
  },
});
`;

/**
 * The real `convex` CLI (1.48) pushes to an emulated deployment: `convex dev --once --url
 * <deployment> --admin-key <key>` calls get_config_hashes, deploy2/start_push, wait_for_schema,
 * finish_push and report_push_completed, and ends in success; broken code fails the push with the
 * CLI's own error output.
 */
describe("convex dev pushes to the emulated deployment", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let cwd: string;

  beforeAll(async () => {
    emulator = await startTestEmulator();
    project = await provisionManagedProject({ ...emulator.team, projectName: "push app" }, emulator.management);
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "convex-push-"));
    fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "push-app", private: true, dependencies: { convex: "1.48.0" } }));
    // The CLI bundles with the project's own convex package and esbuild.
    fs.symlinkSync(path.resolve("node_modules"), path.join(cwd, "node_modules"), "dir");
    fs.mkdirSync(path.join(cwd, "convex"));
    fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
    fs.writeFileSync(path.join(cwd, "convex", "messages.ts"), MESSAGES);
  });
  afterAll(async () => {
    await emulator.server.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  /** `convex dev --once` without the typecheck (tsc costs seconds and is not what is tested here); exit code and both streams. */
  async function push(): Promise<{ code: number; output: string }> {
    const result = await promisify(execFile)(CONVEX_BIN, ["dev", "--once", "--typecheck", "disable", "--url", project.deploymentUrl, "--admin-key", project.token], {
      cwd,
      env: { ...process.env, CI: "1", CONVEX_PROVISION_HOST: emulator.server.baseUrl, NO_COLOR: "1" },
      timeout: 120_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    return result;
  }

  const deploymentName = () => project.deploymentName;

  it("pushes a schema and a module of functions: success, codegen, and the analysis is stored", { timeout: 180_000 }, async () => {
    const { code, output } = await push();
    expect(output).toContain("Convex functions ready!");
    expect(code).toBe(0);
    expect(output).toContain("[+] messages.by_author");
    expect(fs.existsSync(path.join(cwd, "convex", "_generated", "api.d.ts"))).toBe(true);

    const live = await findPush(await getStore(), deploymentName());
    expect(live?.config.functions).toBe("convex/");
    expect(live?.analysis["messages.js"]).toEqual({
      functions: [
        { name: "clear", pos: null, udfType: "Mutation", visibility: { kind: "internal" }, args: expect.any(String), returns: expect.any(String) },
        { name: "list", pos: null, udfType: "Query", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "send", pos: null, udfType: "Mutation", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
      ],
      httpRoutes: null,
      cronSpecs: null,
      sourceMapped: null,
    });
    const send = (live!.analysis["messages.js"] as { functions: { name: string; args: string }[] }).functions.find((fn) => fn.name === "send")!;
    expect(JSON.parse(send.args)).toEqual({
      type: "object",
      value: { author: { fieldType: { type: "string" }, optional: false }, body: { fieldType: { type: "string" }, optional: false } },
    });
    expect((live!.schema as { tables: { tableName: string }[] }).tables.map((table) => table.tableName)).toEqual(["messages"]);
    const paths = (await listPushModules(await getStore(), live!.id)).map((module) => module.path);
    expect(paths).toEqual(expect.arrayContaining(["messages.js", "schema.js"]));
  });

  it("a module that throws at import fails the push with the CLI's error output and keeps the live code", { timeout: 180_000 }, async () => {
    const before = await findPush(await getStore(), deploymentName());
    fs.writeFileSync(path.join(cwd, "convex", "broken.ts"), 'export const x = 1;\nthrow new Error("broken at import");\n');
    try {
      const { code, output } = await push();
      expect(code).not.toBe(0);
      expect(output).toContain("Error: Unable to start push to");
      expect(output).toContain("400 Bad Request: InvalidModules:");
      expect(output).toContain("Failed to analyze broken.js: Uncaught Error: broken at import");
    } finally {
      fs.rmSync(path.join(cwd, "convex", "broken.ts"));
    }
    expect((await findPush(await getStore(), deploymentName()))?.id).toBe(before?.id);
  });

  it("an invalid schema fails the push with the CLI's error output", { timeout: 180_000 }, async () => {
    // Two indexes with one name: defineSchema accepts it, the backend refuses it when evaluating the schema.
    fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA.replace('.index("by_author", ["author"])', '.index("by_author", ["author"]).index("by_author", ["body"])'));
    try {
      const { code, output } = await push();
      expect(code).not.toBe(0);
      expect(output).toContain("400 Bad Request: InvalidSchema:");
      expect(output).toContain("Hit an error while evaluating your schema:");
    } finally {
      fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
    }
  });
});
