import { getConfig, type Config } from "@/lib/config";
import { registerSecret } from "@/lib/log";
import { processSingleton } from "@/lib/singletons";
import { getStore } from "@/lib/store";
import memoryDriver from "./drivers/memory";
import postgresDriver from "./drivers/postgres";
import pusherDriver from "./drivers/pusher";
import redisDriver from "./drivers/redis";
import { RealtimeNotConfiguredError } from "./errors";
import type { Realtime } from "./port";

export type { ChannelAuthorization, Realtime, RealtimeListener, RealtimeMessage } from "./port";
export * from "./errors";
export { authorizeChannel, parseChannelAuthorizationRequest } from "./channel-auth";
export { ERROR_EVENT, buildErrorNotification, errorChannel, projectIdOfErrorChannel, type ErrorNotification } from "./payload";
export type { ErrorDetails, ErrorKind, ErrorNotificationSource, ErrorNotificationType } from "./payload";
export { publishWithRetry } from "./publish";

/**
 * Builds the driver `REALTIME_DRIVER` selects. `postgres` needs DATABASE_URL; `pusher` needs
 * PUSHER_APP_ID, PUSHER_KEY, PUSHER_SECRET and PUSHER_CLUSTER.
 * @throws RealtimeNotConfiguredError naming the missing variables
 */
export function createRealtime(config: Config): Realtime {
  if (config.REALTIME_DRIVER === "memory") return memoryDriver({});
  if (config.REALTIME_DRIVER === "redis") return redisDriver({ url: config.REDIS_URL });
  if (config.REALTIME_DRIVER === "postgres") {
    if (!config.DATABASE_URL) throw new RealtimeNotConfiguredError("REALTIME_DRIVER=postgres needs DATABASE_URL.");
    return postgresDriver({ connectionString: config.DATABASE_URL, db: getStore });
  }
  const { PUSHER_APP_ID: appId, PUSHER_KEY: key, PUSHER_SECRET: secret, PUSHER_CLUSTER: cluster } = config;
  if (!appId || !key || !secret || !cluster) {
    const settings = { PUSHER_APP_ID: appId, PUSHER_KEY: key, PUSHER_SECRET: secret, PUSHER_CLUSTER: cluster };
    const missing = Object.entries(settings).filter(([, value]) => !value).map(([name]) => name);
    throw new RealtimeNotConfiguredError(`REALTIME_DRIVER=pusher needs ${missing.join(", ")}.`);
  }
  registerSecret(secret);
  return pusherDriver({ appId, key, secret, cluster });
}

/**
 * The process-wide realtime driver, built on first use: the SSE route must subscribe to the same
 * bus the dev-server scanner publishes to. Closed (its connections released) with the singletons.
 */
export function getRealtime(): Realtime {
  return processSingleton("realtime", () => createRealtime(getConfig()), { close: (realtime) => realtime.close?.() });
}
