import { requireUser } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { handleMcpRequest } from "@/lib/mcp/server";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

/** The builder's tools as an MCP server (Streamable HTTP, stateless), for the caller's API token. */
export const POST = route(async (request) => handleMcpRequest(request, await requireUser(request), openProjectSandbox));

// Stateless: no server-initiated stream to GET, no session to DELETE.
export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
