import { openApiDocument } from "@/lib/api-contract/document";
import { methodNotAllowed, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/** The OpenAPI 3.1 document of /api, generated from the routes' zod schemas; public. */
export const GET = route(async () => Response.json(openApiDocument()));

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
