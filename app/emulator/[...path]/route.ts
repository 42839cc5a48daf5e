import { getConfig } from "@/lib/config";
import { handleEmulatorRequest } from "@/lib/emulator";
import { jsonError } from "@/lib/http";

export const dynamic = "force-dynamic";

/** The management-API emulator; it exists only when BACKEND_PROVIDER=local (the embedded default). */
async function handle(request: Request): Promise<Response> {
  if (getConfig().BACKEND_PROVIDER !== "local") return jsonError(404, "not_found", "Not found.");
  return handleEmulatorRequest(request);
}

export const GET = handle;
export const POST = handle;
