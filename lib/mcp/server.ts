import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { requireOwnedProject } from "@/lib/auth";
import { checkBackend } from "@/lib/cloud/check";
import { runDeploymentFunction, sampleDeploymentTables } from "@/lib/cloud/deployment-functions";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { errorResponse } from "@/lib/http";
import { toProjectResponse, type OpenProjectSandbox } from "@/lib/projects";
import { MAX_APP_FILE_CHARS, readAppFile, writeAppFile } from "@/lib/projects/app-files";
import { getStore } from "@/lib/store";
import { listProjects } from "@/lib/store/projects";
import type { User } from "@/lib/store/users";

const SERVER_INFO = { name: "app-builder", version: "1.0.0" };

const projectId = z.string().describe("A project id, as list_projects answers it.");
const appPath = z.string().min(1).max(500).describe("A file path relative to the app's folder, e.g. `convex/messages.ts` or `app/index.tsx`.");

/** A tool's answer: its value as JSON text, or the API's error body `{ error: { code, message } }` flagged as an error. */
async function answer(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    const value = await run();
    return { content: [{ type: "text", text: JSON.stringify(value ?? null) }] };
  } catch (error) {
    return { isError: true, content: [{ type: "text", text: await errorResponse(error).text() }] };
  }
}

/** The builder's tools for one caller: every tool acts only on that user's projects. */
function builderServer(user: User, openSandbox: OpenProjectSandbox): McpServer {
  const server = new McpServer(SERVER_INFO);
  const owned = (id: string) => requireOwnedProject(user, id);

  server.registerTool("list_projects", { description: "The caller's projects (id, name, preview URL, backend state)." }, () =>
    answer(async () => ({ projects: (await listProjects(await getStore(), user.id)).map(toProjectResponse) })),
  );
  server.registerTool(
    "enable_backend",
    { description: "Provision the project's backend and wire the app to it (once; later calls answer the same deployment).", inputSchema: { projectId } },
    ({ projectId: id }) => answer(async () => enableCloudBackend(await owned(id), openSandbox)),
  );
  server.registerTool(
    "write_file",
    { description: "Write a text file of the app in the project's sandbox (folders are created).", inputSchema: { projectId, path: appPath, content: z.string().max(MAX_APP_FILE_CHARS) } },
    ({ projectId: id, path, content }) => answer(async () => (await writeAppFile(await owned(id), openSandbox, path, content), { written: path })),
  );
  server.registerTool(
    "read_file",
    { description: "Read a text file of the app in the project's sandbox.", inputSchema: { projectId, path: appPath } },
    ({ projectId: id, path }) => answer(async () => ({ path, content: await readAppFile(await owned(id), openSandbox, path) })),
  );
  server.registerTool(
    "check",
    {
      description: "Wait until the backend dev server pushed the files as they are now (or failed); answers { pushed, errors } with the backend's unresolved structured errors.",
      inputSchema: { projectId },
    },
    ({ projectId: id }) => answer(async () => checkBackend(await owned(id), openSandbox)),
  );
  server.registerTool(
    "run_function",
    {
      description: "Run a query, mutation or action of the project's deployment as admin (e.g. to seed data); answers its result.",
      inputSchema: {
        projectId,
        kind: z.enum(["query", "mutation", "action"]),
        name: z.string().min(1).max(200).describe("The function's path, e.g. `messages:send`."),
        args: z.record(z.string(), z.unknown()).default({}),
      },
    },
    ({ projectId: id, kind, name, args }) => answer(async () => ({ result: await runDeploymentFunction(await owned(id), kind, name, args) })),
  );
  server.registerTool(
    "table_sample",
    { description: "The deployment's tables, each with its newest documents.", inputSchema: { projectId, limit: z.number().int().min(1).max(50).default(5) } },
    ({ projectId: id, limit }) => answer(async () => ({ tables: await sampleDeploymentTables(await owned(id), limit) })),
  );
  return server;
}

/**
 * /api/mcp: the Model Context Protocol over Streamable HTTP, stateless (a server and transport
 * per request, answers as JSON), for an authenticated user.
 */
export async function handleMcpRequest(request: Request, user: User, openSandbox: OpenProjectSandbox): Promise<Response> {
  const server = builderServer(user, openSandbox);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}
