import { methodNotAllowed, route } from "@/lib/http";
import { healthReport } from "@/lib/instance";

export const dynamic = "force-dynamic";

export const GET = route(async () => Response.json(await healthReport()));

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
