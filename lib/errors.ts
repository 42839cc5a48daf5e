/**
 * Base of every error the product maps to an HTTP answer. `code` is snake_case and stable;
 * `message` is a human sentence that never contains a secret. `name` is the subclass's own name,
 * so subclasses do not set it.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Whether `error` is an AppError, also one thrown by another copy of this module: Next.js bundles
 * instrumentation separately from the routes, so process-wide singletons created at start-up
 * throw the other bundle's classes, which `instanceof` does not recognise.
 */
export function isAppError(error: unknown): error is AppError {
  if (error instanceof AppError) return true;
  const candidate = error as Partial<AppError> | null;
  return (
    error instanceof Error &&
    typeof candidate?.status === "number" &&
    candidate.status >= 400 &&
    candidate.status < 600 &&
    typeof candidate.code === "string" &&
    /^[a-z][a-z0-9_]*$/.test(candidate.code)
  );
}

/**
 * Whether `error` is a `type` (or a subclass), also when another bundle's copy of the class threw
 * it (see isAppError): matched by the class names along its prototype chain, which the server
 * build keeps (next.config.ts).
 */
export function isErrorOf<T extends Error>(error: unknown, type: abstract new (...args: never[]) => T): error is T {
  if (error instanceof type) return true;
  if (!(error instanceof Error)) return false;
  for (let proto: object | null = Object.getPrototypeOf(error); proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: string } }).constructor?.name === type.name) return true;
  }
  return false;
}

export class BadRequestError extends AppError {
  constructor(message: string, code = "invalid_request") {
    super(400, code, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "Authentication required: send Authorization: Bearer <token>.") {
    super(401, "unauthorized", message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = "Not found.", code = "not_found") {
    super(404, code, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = "conflict") {
    super(409, code, message);
  }
}

export class NotConfiguredError extends AppError {
  constructor(message: string, code = "not_configured") {
    super(503, code, message);
  }
}
