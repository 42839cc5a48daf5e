import { NotFoundError } from "@/lib/errors";

export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

const METHODS: readonly HttpMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

type MethodHandler = (request: Request) => Promise<Response>;

/** Methods a route answers: Next.js derives HEAD from GET and answers OPTIONS itself. */
type Implemented<Allowed extends HttpMethod> = Allowed | (Allowed extends "GET" ? "HEAD" : never);

/**
 * Handlers for every method a route does not implement, answering 405 in the JSON error shape
 * with an `Allow` header (Next.js would answer an empty 405). A route exports them beside its own:
 * `export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);`
 */
export function methodNotAllowed<Allowed extends HttpMethod>(
  allowed: readonly Allowed[],
): Record<Exclude<HttpMethod, Implemented<Allowed>>, MethodHandler> {
  const implemented = new Set<HttpMethod>(allowed);
  if (implemented.has("GET")) implemented.add("HEAD");
  const allow = [...METHODS.filter((method) => implemented.has(method)), "OPTIONS"].join(", ");
  const answer: MethodHandler = async (request) =>
    Response.json(
      { error: { code: "method_not_allowed", message: `${request.method} is not supported here; use ${allow}.` } },
      { status: 405, headers: { allow } },
    );
  return Object.fromEntries(METHODS.filter((method) => !implemented.has(method)).map((method) => [method, answer])) as Record<
    Exclude<HttpMethod, Implemented<Allowed>>,
    MethodHandler
  >;
}

/** The JSON 404 of a path under /api that no route serves. */
export function notFoundResponse(request: Request): Response {
  const error = new NotFoundError(`No API route at ${new URL(request.url).pathname}.`, "route_not_found");
  return Response.json({ error: { code: error.code, message: error.message } }, { status: error.status });
}
