import { z } from "zod";
import { BadRequestError, isAppError } from "@/lib/errors";
import { log } from "@/lib/log";

/** The product's one error body shape: `{ error: { code, message } }`. */
export function jsonError(status: number, code: string, message: string, headers?: HeadersInit): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}

export function errorResponse(error: unknown): Response {
  if (isAppError(error)) return jsonError(error.status, error.code, error.message);
  if (error instanceof z.ZodError) return jsonError(400, "invalid_request", describeZodError(error));
  log.error("unhandled error in route", { error });
  return jsonError(500, "internal_error", "Something went wrong on our side. Try again.");
}

function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

type Handler<Ctx> = (request: Request, context: Ctx) => Promise<Response>;

/** Wraps a route handler so every thrown error becomes the JSON error shape. */
export function route<Ctx = unknown>(handler: Handler<Ctx>): Handler<Ctx> {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (error) {
      return errorResponse(error);
    }
  };
}

/** Reads a JSON body and validates it; malformed JSON or a wrong shape is a 400. */
export async function parseJsonBody<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    throw new BadRequestError("The request body must be valid JSON.", "invalid_json");
  }
  const result = schema.safeParse(body);
  if (!result.success) throw new BadRequestError(describeZodError(result.error));
  return result.data;
}

/** Validates the query string of a request against a schema; a wrong shape is a 400. */
export function parseQuery<S extends z.ZodType>(request: Request, schema: S): z.output<S> {
  const params = Object.fromEntries(new URL(request.url).searchParams);
  const result = schema.safeParse(params);
  if (!result.success) throw new BadRequestError(describeZodError(result.error));
  return result.data;
}
