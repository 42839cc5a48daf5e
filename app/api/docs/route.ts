import { apiDocsPage } from "@/lib/api-contract/docs-page";
import { methodNotAllowed, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/** The OpenAPI document as a readable page; public. */
export const GET = route(async () => new Response(apiDocsPage(), { headers: { "content-type": "text/html; charset=utf-8" } }));

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
