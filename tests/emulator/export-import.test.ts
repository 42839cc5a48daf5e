import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { makeFunctionReference } from "convex/server";
import { strToU8, unzipSync, zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionManagedProject, type ProvisionedBackendProject } from "@/lib/backend";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";
import { convexAppDir, runConvexCli } from "./helpers";

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  messages: defineTable({ author: v.string(), body: v.string(), count: v.optional(v.int64()), score: v.optional(v.float64()), file: v.optional(v.id("_storage")) }),
  drafts: defineTable({ body: v.string() }),
});
`;

const MESSAGES = `import { v } from "convex/values";
import { mutation } from "./_generated/server";

export const send = mutation({
  args: { author: v.string(), body: v.string(), count: v.optional(v.int64()), score: v.optional(v.float64()), file: v.optional(v.id("_storage")) },
  handler: (ctx, args) => ctx.db.insert("messages", args),
});

export const uploadUrl = mutation({ args: {}, handler: (ctx) => ctx.storage.generateUploadUrl() });
`;

const FILE_TEXT = "hello from a snapshot";

/** Uploads `bytes` for an import the way the CLI does (start, one part, finish); the finish answer. */
async function finishUpload(deployment: ProvisionedBackendProject, bytes: Uint8Array, importArgs: Record<string, unknown>): Promise<Response> {
  const headers = { authorization: `Convex ${deployment.token}` };
  const { uploadToken } = await (await fetch(`${deployment.deploymentUrl}/api/import/start_upload`, { method: "POST", headers })).json();
  const part = await fetch(`${deployment.deploymentUrl}/api/import/upload_part?uploadToken=${encodeURIComponent(uploadToken)}&partNumber=1`, { method: "POST", headers, body: new Uint8Array(bytes) });
  return fetch(`${deployment.deploymentUrl}/api/import/finish_upload`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ import: importArgs, uploadToken, partTokens: [await part.json()] }),
  });
}

/**
 * `npx convex export` and `npx convex import` between two emulated deployments, and
 * `CONVEX_DEPLOY_KEY=… npx convex dev --once`, with the real CLI.
 */
describe("snapshot export and import between emulated deployments, and deploy keys", () => {
  let emulator: TestEmulator;
  let source: ProvisionedBackendProject;
  let target: ProvisionedBackendProject;
  let cwd: string;
  let zipPath: string;
  let storageId: string;
  const cli = (deployment: ProvisionedBackendProject, args: string[]) => runConvexCli(cwd, args, { url: deployment.deploymentUrl, adminKey: deployment.token });
  /** The `messages` documents as `convex data` prints them, one per line (ints as `3n`). */
  const messagesOf = async (deployment: ProvisionedBackendProject) => {
    const rows = await cli(deployment, ["data", "messages", "--format", "jsonl"]);
    expect(rows.code, rows.output).toBe(0);
    return rows.stdout.trim().split("\n");
  };

  beforeAll(async () => {
    emulator = await startTestEmulator({ functionTimeoutMs: { query: 20_000, mutation: 20_000, action: 60_000 }, analyseTimeoutMs: 30_000 });
    source = await provisionManagedProject({ ...emulator.team, projectName: "export source" }, emulator.management);
    target = await provisionManagedProject({ ...emulator.team, projectName: "import target" }, emulator.management);
    cwd = convexAppDir({ "schema.ts": SCHEMA, "messages.ts": MESSAGES });
    zipPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "convex-export-")), "snapshot.zip");
    const pushed = await cli(source, ["dev", "--once", "--typecheck", "disable"]);
    expect(pushed.output).toContain("Convex functions ready!");

    const client = new ConvexHttpClient(source.deploymentUrl);
    const uploadUrl = await client.mutation(makeFunctionReference<"mutation", Record<string, never>, string>("messages:uploadUrl"), {});
    storageId = (await (await fetch(uploadUrl, { method: "POST", headers: { "content-type": "text/plain" }, body: FILE_TEXT })).json()).storageId;
    const send = makeFunctionReference<"mutation">("messages:send");
    await client.mutation(send, { author: "ada", body: "first", count: 3n, score: 1, file: storageId });
    await client.mutation(send, { author: "grace", body: "second" });
  }, 600_000);
  afterAll(async () => {
    await emulator?.server.close();
    if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
    if (zipPath) fs.rmSync(path.dirname(zipPath), { recursive: true, force: true });
  });

  it("convex export writes the tables and files in Convex's snapshot layout", { timeout: 600_000 }, async () => {
    const exported = await cli(source, ["export", "--path", zipPath, "--include-file-storage"]);
    expect(exported.code, exported.output).toBe(0);
    expect(exported.output).toContain("Downloaded snapshot export to");

    const entries = unzipSync(fs.readFileSync(zipPath));
    const text = (name: string) => new TextDecoder().decode(entries[name]);
    expect(Object.keys(entries).sort()).toEqual(
      ["README.md", "_storage/documents.jsonl", `_storage/${storageId}`, "_tables/documents.jsonl", "drafts/documents.jsonl", "drafts/generated_schema.jsonl", "messages/documents.jsonl", "messages/generated_schema.jsonl"].sort(),
    );
    expect(text("_tables/documents.jsonl")).toBe('{"name":"drafts","id":10001}\n{"name":"messages","id":10002}\n');
    expect(text("messages/generated_schema.jsonl")).toBe('"uniform"\n');
    expect(text("drafts/documents.jsonl")).toBe("");
    const [first, second] = text("messages/documents.jsonl").trim().split("\n");
    // Lossless export JSON: the int64 a bare integer, the float64 with its fraction.
    expect(first).toContain('"count":3,');
    expect(first).toContain('"score":1.0');
    expect(JSON.parse(first)).toMatchObject({ author: "ada", body: "first", file: storageId, _id: expect.stringMatching(/messages$/) });
    expect(JSON.parse(second)).toMatchObject({ author: "grace", body: "second" });
    expect(JSON.parse(text("_storage/documents.jsonl"))).toMatchObject({ _id: storageId, size: FILE_TEXT.length, contentType: "text/plain" });
    expect(text(`_storage/${storageId}`)).toBe(FILE_TEXT);
  });

  it("convex import into a second deployment ends with the same documents and files; a second import needs --replace", { timeout: 600_000 }, async () => {
    const imported = await cli(target, ["import", zipPath, "-y"]);
    expect(imported.code, imported.output).toBe(0);
    expect(imported.output).toContain("Added 3 documents");
    const sourceMessages = await messagesOf(source);
    expect(sourceMessages).toHaveLength(2);
    expect(sourceMessages.join("\n")).toContain("3n");
    expect(await messagesOf(target)).toEqual(sourceMessages);
    const file = await fetch(`${target.deploymentUrl}/api/storage/${storageId}`);
    expect(file.headers.get("content-type")).toBe("text/plain");
    expect(await file.text()).toBe(FILE_TEXT);

    const again = await cli(target, ["import", zipPath, "-y"]);
    expect(again.code).toBe(1);
    expect(again.output).toContain("already exists. Please choose a new table name or use replace/append modes.");

    const replaced = await cli(target, ["import", zipPath, "--replace", "-y"]);
    expect(replaced.code, replaced.output).toBe(0);
    expect(replaced.output).toContain("Import change summary:");
    expect(await messagesOf(target)).toEqual(sourceMessages);

    // Documents without ids (a JSONL file into one table) get new ids of the deployment's form.
    const draftsPath = path.join(path.dirname(zipPath), "drafts.jsonl");
    fs.writeFileSync(draftsPath, '{"body":"one"}\n{"body":"two"}\n');
    const drafts = await cli(target, ["import", "--table", "drafts", draftsPath, "-y"]);
    expect(drafts.code, drafts.output).toBe(0);
    expect(drafts.output).toContain('Added 2 documents to table "drafts"');
    const rows = await cli(target, ["data", "drafts", "--format", "jsonl"]);
    expect(rows.code, rows.output).toBe(0);
    const ids = [...rows.stdout.matchAll(/"_id": "([^"]+)"/g)].map((match) => match[1]);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^\d{26}drafts$/);
  });

  it("refuses a file that is not a snapshot or a format it cannot read, with upstream's codes", { timeout: 120_000 }, async () => {
    const cases: [Uint8Array, Record<string, unknown>, number, string, string][] = [
      [strToU8("not a zip"), { format: "zip" }, 400, "InvalidZip", "invalid zip file"],
      [zipSync({ "notes.txt": strToU8("hello") }), { format: "zip" }, 400, "InvalidZip", "not a Convex snapshot export"],
      [strToU8('{"a":1}\n'), { format: "parquet", tableName: "rows" }, 400, "BadJsonBody", "format"],
      [strToU8('{"a":1}\n'), { format: "jsonLines" }, 400, "InvalidName", "JSONL import requires table name"],
      [strToU8('{"a":1}\n{"a":\n'), { format: "jsonLines", tableName: "rows" }, 400, "JsonInvalidRow", "Row 2 wasn't valid JSON"],
      [strToU8('{"a":1}'), { format: "jsonArray", tableName: "rows" }, 400, "NotJsonArray", "Not a JSON array"],
    ];
    for (const [bytes, importArgs, status, code, message] of cases) {
      const answer = await finishUpload(target, bytes, importArgs);
      expect(answer.status, code).toBe(status);
      const body = await answer.json();
      expect(body.code).toBe(code);
      expect(body.message).toContain(message);
    }
  });

  it("CONVEX_DEPLOY_KEY alone finds the local deployment: convex dev --once pushes to it", { timeout: 600_000 }, async () => {
    const pushed = await runConvexCli(cwd, ["dev", "--once", "--typecheck", "disable"], { url: "", adminKey: "" }, {
      CONVEX_DEPLOY_KEY: target.token,
      CONVEX_PROVISION_HOST: emulator.server.baseUrl,
    });
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain("Convex functions ready!");
    const client = new ConvexHttpClient(target.deploymentUrl);
    expect(await client.mutation(makeFunctionReference<"mutation">("messages:send"), { author: "key", body: "pushed with a deploy key" })).toMatch(/messages$/);
  });
});
