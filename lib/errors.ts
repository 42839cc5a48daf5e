/**
 * Base of every error the product maps to an HTTP answer. `code` is snake_case and stable;
 * `message` is a human sentence that never contains a secret.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AppError";
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, code = "invalid_request") {
    super(400, code, message);
    this.name = "BadRequestError";
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "Authentication required: send Authorization: Bearer <token>.") {
    super(401, "unauthorized", message);
    this.name = "UnauthorizedError";
  }
}

export class NotFoundError extends AppError {
  constructor(message = "Not found.", code = "not_found") {
    super(404, code, message);
    this.name = "NotFoundError";
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = "conflict") {
    super(409, code, message);
    this.name = "ConflictError";
  }
}

export class NotConfiguredError extends AppError {
  constructor(message: string, code = "not_configured") {
    super(503, code, message);
    this.name = "NotConfiguredError";
  }
}
