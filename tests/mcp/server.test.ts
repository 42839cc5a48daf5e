import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET, POST } from "@/app/api/mcp/route";
import type { Project } from "@/lib/store/projects";
import { startCloudFixture, type CloudFixture } from "../cloud/fixture";
import { startRouteServer } from "../helpers/route-server";
import { createTestUser } from "../helpers/users";

// The official MCP client over Streamable HTTP against the route, served on loopback; the
// backend dev server is the real `npx convex dev` (the app dev server stays the stand-in).
let fx: CloudFixture;
let project: Project;
let server: Awaited<ReturnType<typeof startRouteServer>>;
const clients: Client[] = [];

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({ notes: defineTable({ text: v.string() }) });
`;

const NOTES = `import { v } from "convex/values";
import { mutation, query } from "./_generated/server";

export const add = mutation({ args: { text: v.string() }, handler: async (ctx, { text }) => ctx.db.insert("notes", { text }) });

export const list = query({ args: {}, handler: async (ctx) => ctx.db.query("notes").collect() });
`;

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "builder-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A tool's answer: its JSON value, or the API's error body when flagged as an error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; value: unknown }> {
  const result = await client.callTool({ name, arguments: args });
  const [content] = result.content as { type: string; text: string }[];
  return { isError: result.isError === true, value: JSON.parse(content.text) };
}

beforeAll(async () => {
  delete process.env.BACKEND_DEV_COMMAND;
  fx = await startCloudFixture();
  project = await fx.newProject();
  server = await startRouteServer([
    { method: "POST", pattern: /^\/api\/mcp$/, handler: (request) => POST(request, undefined) },
    { method: "GET", pattern: /^\/api\/mcp$/, handler: (request) => GET(request) },
  ]);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server?.close();
  await fx.close();
});

describe("the MCP server at /api/mcp", () => {
  it("lists its tools, and runs enable → write a function → check → run it → table sample", { timeout: 420_000 }, async () => {
    const client = await connect(fx.owner.token);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["check", "enable_backend", "list_projects", "read_file", "run_function", "table_sample", "write_file"]);

    expect((await call(client, "list_projects")).value).toEqual({ projects: [expect.objectContaining({ id: project.id })] });
    const enabled = await call(client, "enable_backend", { projectId: project.id });
    expect(enabled).toMatchObject({ isError: false, value: { deploymentUrl: expect.stringMatching(/^http/) } });

    expect((await call(client, "write_file", { projectId: project.id, path: "convex/schema.ts", content: SCHEMA })).isError).toBe(false);
    expect(await call(client, "write_file", { projectId: project.id, path: "convex/notes.ts", content: NOTES })).toEqual({ isError: false, value: { written: "convex/notes.ts" } });
    expect((await call(client, "read_file", { projectId: project.id, path: "convex/notes.ts" })).value).toEqual({ path: "convex/notes.ts", content: NOTES });
    expect(await call(client, "check", { projectId: project.id })).toEqual({ isError: false, value: { pushed: true, errors: [], durationMs: expect.any(Number) } });

    const added = await call(client, "run_function", { projectId: project.id, kind: "mutation", name: "notes:add", args: { text: "seeded by the agent" } });
    expect(added).toEqual({ isError: false, value: { result: expect.any(String) } });
    const noteId = (added.value as { result: string }).result;
    const listed = await call(client, "run_function", { projectId: project.id, kind: "query", name: "notes:list" });
    expect(listed.value).toEqual({ result: [expect.objectContaining({ _id: noteId, text: "seeded by the agent" })] });
    const sample = await call(client, "table_sample", { projectId: project.id, limit: 3 });
    expect(sample.value).toEqual({ tables: [{ name: "notes", documents: [expect.objectContaining({ _id: noteId, text: "seeded by the agent" })] }] });

    const failing = await call(client, "run_function", { projectId: project.id, kind: "query", name: "notes:missing" });
    expect(failing).toMatchObject({ isError: true, value: { error: { code: "function_failed" } } });
    const escaping = await call(client, "read_file", { projectId: project.id, path: "../.bashrc" });
    expect(escaping).toMatchObject({ isError: true, value: { error: { code: "invalid_path" } } });
  });

  it("shows another user none of the first user's projects, and not-found for their ids; no token, no access", async () => {
    const stranger = await createTestUser(fx.db, "Stranger");
    const client = await connect(stranger.token);
    expect((await call(client, "list_projects")).value).toEqual({ projects: [] });
    for (const [tool, args] of [
      ["read_file", { projectId: project.id, path: "convex/notes.ts" }],
      ["table_sample", { projectId: project.id }],
      ["run_function", { projectId: project.id, kind: "query", name: "notes:list" }],
    ] as const) {
      expect(await call(client, tool, args)).toMatchObject({ isError: true, value: { error: { code: "project_not_found" } } });
    }

    const anonymous = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe("unauthorized");
  });
});
