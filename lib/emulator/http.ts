import crypto from "node:crypto";
import { z } from "zod";
import { isErrorOf } from "@/lib/errors";
import { BodyTimeoutError, PayloadTooLargeError, readTextWithin } from "@/lib/http/body";

/**
 * A failure answered the way the hosted API answers: HTTP status plus `{code, message}`. Messages
 * never contain a token or key; handlers only put slugs, names and limits in them.
 */
export class EmulatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "EmulatorError";
  }
}

export function errorBody(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status });
}

/** SHA-256 hex digest: how the emulator stores every token, key and code. */
export function digest(secret: string): string {
  return crypto.createHash("sha256").update(secret).digest("hex");
}

/** A fresh random secret, base64url. */
export function randomSecret(bytes = 32): string {
  return crypto.randomBytes(bytes).toString("base64url");
}

/** Constant-time comparison of two secrets. */
export function secretsEqual(a: string, b: string): boolean {
  const left = Buffer.from(digest(a));
  const right = Buffer.from(digest(b));
  return crypto.timingSafeEqual(left, right);
}

/** The credential after `<scheme> ` in the Authorization header (scheme case-insensitive), or null. */
export function authorizationCredential(request: Request, scheme: "Bearer" | "Convex"): string | null {
  const header = request.headers.get("authorization")?.trim();
  if (!header || header.slice(0, scheme.length + 1).toLowerCase() !== `${scheme.toLowerCase()} `) return null;
  const credential = header.slice(scheme.length + 1).trim();
  return credential || null;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message)).join("; ");
}

/**
 * Request body limits of a Convex deployment (`crates/common/src/knobs.rs`, `crates/udf`): pushes
 * `MAX_PUSH_BYTES`, API calls (function arguments) `MAX_BACKEND_PUBLIC_API_REQUEST_SIZE`, HTTP
 * actions `HTTP_ACTION_BODY_LIMIT`.
 */
export const PUSH_BODY_LIMIT_BYTES = 100_000_000;
export const API_BODY_LIMIT_BYTES = 8 * 1024 * 1024 + 2000;
export const HTTP_ACTION_BODY_LIMIT_BYTES = 20 * 1024 * 1024;
/** Files uploaded to storage URLs (upstream streams them without a limit; the emulator holds one in memory while it stores it). */
export const STORAGE_UPLOAD_LIMIT_BYTES = 50 * 1024 * 1024;

/** The body limit of a deployment (or management) path. */
export function bodyLimitOf(path: string): number {
  if (path.startsWith("/api/deploy2/") || path === "/api/push_config") return PUSH_BODY_LIMIT_BYTES;
  if (path === "/api/storage/upload") return STORAGE_UPLOAD_LIMIT_BYTES;
  return path.startsWith("/api/") ? API_BODY_LIMIT_BYTES : HTTP_ACTION_BODY_LIMIT_BYTES;
}

/** A body that passed its limit or stalled, as the emulator answers it (the product's error in the hosted shape). */
export function bodyError(error: unknown): EmulatorError | null {
  if (isErrorOf(error, PayloadTooLargeError)) return new EmulatorError(413, "RequestTooLarge", error.message);
  if (isErrorOf(error, BodyTimeoutError)) return new EmulatorError(408, "RequestTimeout", error.message);
  return null;
}

/** The request's body as text, within the API body limit. */
async function readLimitedText(request: Request): Promise<string> {
  try {
    return await readTextWithin(request, API_BODY_LIMIT_BYTES);
  } catch (error) {
    throw bodyError(error) ?? error;
  }
}

/** Parses and validates a JSON body; malformed or mis-shaped bodies are 400 `BadJsonBody`, as upstream. */
export async function readJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  const text = await readLimitedText(request);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new EmulatorError(400, "BadJsonBody", "The request body must be valid JSON.");
  }
  const result = schema.safeParse(body);
  if (!result.success) throw new EmulatorError(400, "BadJsonBody", `Failed to deserialize the JSON body: ${describeIssues(result.error)}`);
  return result.data;
}

/** Reads an `application/x-www-form-urlencoded` body. */
export async function readForm(request: Request): Promise<URLSearchParams> {
  return new URLSearchParams(await readLimitedText(request));
}

/** Parses and validates the query string; invalid parameters are 400 `BadQueryParameters`. */
export function readQuery<S extends z.ZodType>(request: Request, schema: S): z.output<S> {
  const result = schema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!result.success) throw new EmulatorError(400, "BadQueryParameters", `Invalid query parameters: ${describeIssues(result.error)}`);
  return result.data;
}
