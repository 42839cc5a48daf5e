import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { getStore, pgliteDirOf, readDatabaseLock, type Sql } from "@/lib/store";

const HEALTH_TIMEOUT_MS = 5_000;

/** Thrown when a running server refused or failed a CLI's request; carries the server's error. */
export class ServerApiError extends AppError {}

/** A running server's API as the owner of an API token calls it (Bearer auth, JSON bodies). */
export class ServerApi {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** The JSON answer of `method path`; a failed answer is thrown as ServerApiError unless `answersFailure` accepts its body. */
  async request<T>(method: "GET" | "POST", path: string, body?: unknown, answersFailure: (payload: object) => boolean = () => false): Promise<T> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = (await response.json().catch(() => null)) as (T & { error?: { code?: string; message?: string } }) | null;
    if (response.ok || (payload && answersFailure(payload))) return payload as T;
    throw new ServerApiError(
      response.status,
      payload?.error?.code ?? "server_error",
      `${method} ${this.baseUrl}${path} answered ${response.status}: ${payload?.error?.message ?? response.statusText}`,
    );
  }
}

/** Where a CLI does its work: through a running server's API, or on the store it opened itself. */
export type CliTarget = { kind: "api"; api: ServerApi } | { kind: "store"; db: Sql };

async function answersHealth(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) })).ok;
  } catch {
    return false;
  }
}

/**
 * One writer per embedded database: when a server holds DATA_DIR's PGlite and its API (at the
 * PUBLIC_BASE_URL it recorded in the lock) answers, the CLI goes through that API with
 * CLI_API_TOKEN. Otherwise it opens the store itself, which takes the lock, and is refused with
 * DatabaseLockedError while another process (a server whose API does not answer, another CLI)
 * holds it. With DATABASE_URL every process may open the store.
 */
export async function openCliTarget(): Promise<CliTarget> {
  const config = getConfig();
  if (!config.DATABASE_URL) {
    const holder = await readDatabaseLock(pgliteDirOf(config.DATA_DIR));
    if (holder?.baseUrl && (await answersHealth(holder.baseUrl))) {
      if (!config.CLI_API_TOKEN) {
        throw new AppError(
          401,
          "cli_token_required",
          `A running server (pid ${holder.pid}, ${holder.baseUrl}) holds the embedded database, so this command goes through its API: ` +
            "set CLI_API_TOKEN to an API token of the project's owner (e.g. the demo token printed at first start).",
        );
      }
      return { kind: "api", api: new ServerApi(holder.baseUrl, config.CLI_API_TOKEN) };
    }
  }
  return { kind: "store", db: await getStore() };
}
