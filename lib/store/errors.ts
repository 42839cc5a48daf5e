import { AppError } from "@/lib/errors";

/** How long a client is told to wait after a lost database connection (Retry-After). */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** The database could not be reached, or the connection broke mid-request (restart, failover): 503. */
export class StoreUnavailableError extends AppError {
  readonly retryAfterSeconds = STORE_RETRY_AFTER_SECONDS;

  constructor(options?: { cause?: unknown }) {
    super(503, "store_unavailable", "The database is unavailable right now; try again in a few seconds.", options);
  }
}

/** Socket errors of a connection that could not be opened or broke. */
const CONNECTION_ERRNOS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** SQLSTATEs of a server going away or refusing connections: class 08, admin/crash shutdown, starting up, too many connections. */
const CONNECTION_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);
/** What node-postgres says when the socket ends under it (its errors carry no code then). */
const CONNECTION_MESSAGES = /Connection terminated|connection error|Client was closed|timeout exceeded when trying to connect/i;

/** Whether `error` is a lost or refused database connection (not an error of the statement itself). */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (CONNECTION_ERRNOS.has(code) || CONNECTION_SQLSTATES.has(code) || code.startsWith("08"))) return true;
  return CONNECTION_MESSAGES.test(error.message);
}
