import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";

/** Empty strings in the environment mean "unset", as in most dotenv setups. */
const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value.trim()));

const url = optionalString.pipe(z.url().optional());

const booleanFlag = (defaultValue: boolean) =>
  optionalString.transform((value, ctx) => {
    if (value === undefined) return defaultValue;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off)$/i.test(value)) return false;
    ctx.addIssue({ code: "custom", message: "expected true or false" });
    return z.NEVER;
  });

const integer = (defaultValue: number, min = 0) =>
  optionalString.transform((value, ctx) => {
    if (value === undefined) return defaultValue;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min) {
      ctx.addIssue({ code: "custom", message: `expected an integer >= ${min}` });
      return z.NEVER;
    }
    return parsed;
  });

/** A port range `first-last` of unprivileged ports. */
const portRange = (defaultValue: string) =>
  optionalString.transform((value, ctx) => {
    const match = /^(\d{1,5})-(\d{1,5})$/.exec(value ?? defaultValue);
    const [first, last] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
    if (!match || first < 1024 || last > 65535 || first > last) {
      ctx.addIssue({ code: "custom", message: "expected first-last with 1024 <= first <= last <= 65535" });
      return z.NEVER;
    }
    return { first, last };
  });

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: integer(3000, 1),
  /** Public address of this service; used for blob URLs and OAuth redirects. */
  PUBLIC_BASE_URL: url,
  DATA_DIR: optionalString,
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),

  // Store
  DATABASE_URL: optionalString,
  SECRETS_KEY: optionalString,
  /** API token the CLIs (`npm run bundle`, `npm run cleanup`) send to a running server holding the embedded database. */
  CLI_API_TOKEN: optionalString,

  // Caller authentication
  SUPABASE_JWT_SECRET: optionalString,
  SUPABASE_JWKS_URL: url,
  /** Dashboard sessions end this long after sign-in, whatever happens. */
  SESSION_MAX_AGE_HOURS: integer(720, 1),
  /** Dashboard sessions end after this long without a request. */
  SESSION_IDLE_MINUTES: integer(10_080, 1),
  /** Disables seeding the demo user and project on first start. */
  SEED_DEMO: booleanFlag(true),

  // Backend management API (spec section 5)
  BACKEND_PROVIDER: z.enum(["local", "hosted"]).default("local"),
  BACKEND_PRODUCT_NAME: optionalString.transform((value) => value ?? "Convex"),
  BACKEND_TEAM_SCOPED_TOKEN: optionalString,
  BACKEND_TEAM_SLUG: optionalString,
  PROVISION_HOST: url,
  DASHBOARD_HOST: url,
  BACKEND_OAUTH_CLIENT_ID: optionalString,
  BACKEND_OAUTH_CLIENT_SECRET: optionalString,
  BACKEND_DEV_COMMAND: optionalString,
  BACKEND_API_TIMEOUT_MS: integer(30_000, 1),
  /**
   * Loopback ports of emulated deployments, one fixed port each, as `first-last`: outside the
   * sandboxes' range and the kernel's ephemeral ports (32768-60999), so a deployment's URL
   * survives restarts.
   */
  EMULATOR_PORT_RANGE: portRange("23000-23999"),
  EMULATOR_PROJECT_QUOTA: integer(20, 0),

  // Provisioning runs and crash recovery (lib/instance, lib/cloud/provisioning-run.ts)
  /** Stable name of this app instance; a restart under the same name takes its runs back at once. */
  INSTANCE_ID: optionalString,
  INSTANCE_HEARTBEAT_MS: integer(2_000, 100),
  PROVISIONING_LEASE_MS: integer(300_000, 1_000),
  PROVISIONING_WAIT_MS: integer(60_000, 0),
  /**
   * How often every instance looks for backend dev servers whose owner died or shut down, and
   * takes them over: with the heartbeat, bounds how long a dead owner's server goes unread.
   */
  BACKEND_DEV_LEASE_CHECK_MS: integer(2_000, 100),
  /** How long POST /api/projects/<id>/check waits for the backend dev server's push of the current files. */
  CHECK_TIMEOUT_MS: integer(180_000, 1),
  /** At SIGTERM/SIGINT, how long in-flight requests may run before their connections are closed. */
  SHUTDOWN_DRAIN_MS: integer(10_000, 0),

  // Request bodies (lib/http/body.ts)
  /** A request body that sends nothing for this long is given up with 408. */
  BODY_IDLE_TIMEOUT_MS: integer(30_000, 1),
  /** A request body still arriving after this long (however slowly it trickles) is given up with 408. */
  BODY_TOTAL_TIMEOUT_MS: integer(60_000, 1),

  // Blob storage
  BLOB_DRIVER: z.enum(["fs", "vercel", "s3"]).default("fs"),
  BLOB_READ_WRITE_TOKEN: optionalString,
  S3_ENDPOINT: url,
  S3_REGION: optionalString.transform((value) => value ?? "us-east-1"),
  S3_BUCKET: optionalString,
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_PUBLIC_BASE_URL: url,
  S3_FORCE_PATH_STYLE: booleanFlag(false),

  // Sandbox
  /**
   * `local`: the e2b driver on the local sandbox service (packages/sandbox-local, walled sandboxes)
   * that `npm start` runs beside the server; `local-unwalled`: directories and child processes of
   * the server itself (no wall: app code can read everything the server can); `e2b`: E2B's cloud.
   */
  SANDBOX_DRIVER: z.enum(["local", "local-unwalled", "e2b"]).default("local"),
  E2B_API_KEY: optionalString,
  E2B_TEMPLATE: optionalString,
  /** Where the e2b driver's lifecycle API calls go instead of E2B's cloud (the local sandbox service, packages/sandbox-local). */
  E2B_API_URL: url,
  /** Where the e2b driver's envd traffic goes instead of E2B's cloud; the local sandbox service serves both on one address. */
  E2B_SANDBOX_URL: url,
  /**
   * Loopback port of the local sandbox service (SANDBOX_DRIVER=local): the server's e2b driver
   * calls it unless E2B_API_URL says otherwise, and previews are `http://<port>-<id>.localhost:<it>`.
   */
  SANDBOX_SERVICE_PORT: integer(49982, 1),
  APP_DEV_COMMAND: optionalString,
  /** Machine-wide directory of the app toolchain (the template's npm dependencies), shared by all local sandboxes. */
  APP_TOOLCHAIN_DIR: optionalString,
  /** Loopback ports local sandboxes hand to their servers (app dev server), as `first-last`. */
  LOCAL_PORT_RANGE: portRange("24000-24999"),
  /**
   * Host name in local sandbox preview URLs. Default: a different site from the dashboard's
   * (`127.0.0.1` when PUBLIC_BASE_URL is on `localhost`, else `localhost`), so an app's preview
   * never shares the dashboard's site (cookies, SameSite).
   */
  LOCAL_PREVIEW_HOST: optionalString.pipe(z.string().regex(/^[A-Za-z0-9.-]+$/, "expected a host name").optional()),
  XDG_CACHE_HOME: optionalString,
  BUNDLE_EXPORT_COMMAND: optionalString,

  // Realtime
  /** Default: postgres when DATABASE_URL is set (every instance shares it), else memory. */
  REALTIME_DRIVER: optionalString.pipe(z.enum(["memory", "postgres", "redis", "pusher"]).optional()),
  REDIS_URL: optionalString.transform((value) => value ?? "redis://127.0.0.1:6379"),
  /** How often an open SSE stream sends a heartbeat comment, also while the realtime bus is away. */
  SSE_HEARTBEAT_MS: integer(15_000, 100),
  PUSHER_APP_ID: optionalString,
  PUSHER_KEY: optionalString,
  PUSHER_SECRET: optionalString,
  PUSHER_CLUSTER: optionalString,

  // Background jobs (lib/jobs): bundle builds, screenshots, cleanup, toolchain warm-up
  /** Jobs one instance runs at once, of every kind. */
  JOBS_CONCURRENCY: integer(2, 1),
  /** Jobs running at once across every instance on the database. */
  JOBS_GLOBAL_CONCURRENCY: integer(8, 1),
  /** Jobs running at once on one sandbox (builds share its checkout and dev server). */
  JOBS_SANDBOX_CONCURRENCY: integer(1, 1),
  /** A running job whose instance stopped renewing it (died) is retried elsewhere after this long. */
  JOBS_EXPIRE_SECONDS: integer(60, 3),
  /** Retries of a job that threw, after JOBS_RETRY_DELAY_SECONDS, doubling each time. */
  JOBS_RETRY_LIMIT: integer(2, 0),
  JOBS_RETRY_DELAY_SECONDS: integer(5, 0),
  /** How often an idle instance looks for queued jobs of other instances. */
  JOBS_POLL_MS: integer(1_000, 100),
  /** When the bundle cleanup of every project runs (cron, UTC). */
  JOBS_CLEANUP_CRON: optionalString.transform((value) => value ?? "0 3 * * *"),
  /** When every project's app repository is mirrored to the blob store (unchanged ones store nothing); `off` turns the autosave off. */
  REPOSITORY_AUTOSAVE_CRON: optionalString.transform((value) => value ?? "*/10 * * * *"),

  // Screenshots
  CHROMIUM_PATH: optionalString.transform((value) => value ?? "/usr/bin/chromium"),
  SCREENSHOT_TIMEOUT_MS: integer(20_000, 1),
});

type Env = z.output<typeof envSchema>;

export type Config = Omit<Env, "PUBLIC_BASE_URL" | "DATA_DIR" | "APP_TOOLCHAIN_DIR" | "XDG_CACHE_HOME" | "INSTANCE_ID" | "LOCAL_PREVIEW_HOST" | "REALTIME_DRIVER"> & {
  PUBLIC_BASE_URL: string;
  REALTIME_DRIVER: NonNullable<Env["REALTIME_DRIVER"]>;
  LOCAL_PREVIEW_HOST: string;
  DATA_DIR: string;
  APP_TOOLCHAIN_DIR: string;
  INSTANCE_ID: string;
};

/** Thrown at start-up when an environment variable is invalid; names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(
      `Invalid configuration: ${issues.map((issue) => `${issue.variable}: ${issue.message}`).join("; ")}`,
    );
    this.name = "ConfigError";
  }
}

/** Parses an environment; pure, so tests can build configurations side by side. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = envSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? "(environment)"),
        message: issue.message,
      })),
    );
  }
  const { XDG_CACHE_HOME, ...parsed } = result.data;
  const publicBaseUrl = (parsed.PUBLIC_BASE_URL ?? `http://localhost:${parsed.PORT}`).replace(/\/+$/, "");
  return {
    ...parsed,
    // Outside DATA_DIR on purpose: one install serves every data directory (and test run) on the machine.
    APP_TOOLCHAIN_DIR: path.resolve(
      /*turbopackIgnore: true*/ parsed.APP_TOOLCHAIN_DIR ?? path.join(XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloud-backend-service", "app-toolchain"),
    ),
    PUBLIC_BASE_URL: publicBaseUrl,
    LOCAL_PREVIEW_HOST: parsed.LOCAL_PREVIEW_HOST ?? (new URL(publicBaseUrl).hostname === "localhost" ? "127.0.0.1" : "localhost"),
    // Runtime location chosen by the operator, not a build input.
    DATA_DIR: path.resolve(/*turbopackIgnore: true*/ parsed.DATA_DIR ?? ".data"),
    // No two live servers share a host and a port, and a restarted server keeps both.
    INSTANCE_ID: parsed.INSTANCE_ID ?? `${os.hostname()}:${parsed.PORT}`,
    // Instances that share a database reach each other's SSE subscribers through it.
    REALTIME_DRIVER: parsed.REALTIME_DRIVER ?? (parsed.DATABASE_URL ? "postgres" : "memory"),
  };
}

/** The process configuration, parsed once from process.env on first use. */
export function getConfig(): Config {
  return processSingleton("config", () => parseConfig(process.env));
}

/** Drops the cached configuration so the next getConfig() re-reads process.env (tests). */
export function reloadConfig(): Config {
  void resetProcessSingleton("config");
  return getConfig();
}
