import { z } from "zod";
import { AppError, BadRequestError, isAppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { JSON_BODY_LIMIT_BYTES, readTextWithin } from "./body";

export { isCrossSiteNavigation, reenterResponse } from "./reenter";
export { BodyIncompleteError, BodyTimeoutError, JSON_BODY_LIMIT_BYTES, PayloadTooLargeError, readBodyWithin, readTextWithin } from "./body";
export { methodNotAllowed, notFoundResponse, type HttpMethod } from "./methods";
export { type FastPath, FAST_PATH_KEY, installFastPaths, requestHeadOf, writeResponse } from "./node";

/** The product's one error body shape: `{ error: { code, message } }`. */
export function jsonError(status: number, code: string, message: string, headers?: HeadersInit): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}

/** An AppError that tells the client when to try again (503 store_unavailable, 429s). */
const retryAfterOf = (error: AppError): HeadersInit | undefined => {
  const seconds = (error as AppError & { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === "number" && seconds > 0 ? { "retry-after": String(Math.ceil(seconds)) } : undefined;
};

/** Whether `error`, or an error it wraps, is the file system being full (or over quota). */
function isDiskFull(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === "ENOSPC" || code === "EDQUOT") return true;
  }
  return false;
}

export function errorResponse(error: unknown): Response {
  // Before AppErrors: a store error wrapping ENOSPC (e.g. a blob write) is about the disk, not the store.
  if (isDiskFull(error)) {
    log.error("the disk is full", { error });
    return jsonError(507, "insufficient_storage", "The server is out of storage space; nothing was saved. Try again later.");
  }
  if (isAppError(error)) return jsonError(error.status, error.code, error.message, retryAfterOf(error));
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

/** Thrown when a JSON route gets a body of another content type (415). */
export class UnsupportedMediaTypeError extends AppError {
  constructor() {
    super(415, "unsupported_media_type", "Send the body as JSON, with Content-Type: application/json.");
  }
}

/** `application/json`, or any `application/<something>+json`, with or without parameters. */
const JSON_CONTENT_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export interface ParseJsonBodyOptions {
  /** An empty body (of any content type) stands for `{}`. @default false */
  optional?: boolean;
}

/**
 * Reads a JSON body and validates it. The content type must be JSON (415 otherwise: a `text/plain`
 * body is what a cross-site form can send without asking); malformed JSON or a wrong shape is a 400;
 * a body over JSON_BODY_LIMIT_BYTES is a 413, refused without reading the rest.
 */
export async function parseJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: ParseJsonBodyOptions = {},
): Promise<z.output<S>> {
  const text = await readTextWithin(request, JSON_BODY_LIMIT_BYTES);
  let body: unknown = {};
  if (!options.optional || text.trim() !== "") {
    if (!JSON_CONTENT_TYPE.test(request.headers.get("content-type") ?? "")) throw new UnsupportedMediaTypeError();
    try {
      body = JSON.parse(text);
    } catch {
      throw new BadRequestError("The request body must be valid JSON.", "invalid_json");
    }
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
