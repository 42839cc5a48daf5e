import { AppError } from "@/lib/errors";

/** Provisioning failed upstream; the project's state records the same message as `failed`. */
export class ProvisioningFailedError extends AppError {
  constructor(message: string, code = "provisioning_failed", options?: { cause?: unknown }) {
    super(502, code, message, options);
  }
}

/** Another run holds the project's lease and did not finish within the wait. */
export class ProvisioningInProgressError extends AppError {
  constructor() {
    super(409, "in_progress", "The backend of this project is being set up by another request; try again shortly.");
  }
}

/** This run's lease expired and another run took over; this run must stop without writing. */
export class LeaseLostError extends Error {
  constructor() {
    super("The provisioning lease was taken over by another run.");
    this.name = "LeaseLostError";
  }
}

/** The backend dev server finished no push of the current files within CHECK_TIMEOUT_MS. */
export class CheckTimeoutError extends AppError {
  constructor(timeoutMs: number) {
    super(504, "check_timeout", `The backend dev server did not finish a push of the current files within ${timeoutMs} ms; try again.`);
  }
}

/** The backend dev server could not be started or stopped before its push ended. */
export class BackendDevServerUnavailableError extends AppError {
  constructor() {
    super(503, "backend_dev_server_unavailable", "The backend dev server is not running; start it (POST /api/backend/dev/start) and try again.");
  }
}
