import type PusherClient from "pusher";
import { RealtimeNotConfiguredError, RealtimePublishError, RealtimeTimeoutError } from "../errors";
import { checkPublishable } from "../limits";
import type { RealtimeDriverFactory } from "../port";

export interface PusherRealtimeOptions {
  appId: string;
  key: string;
  secret: string;
  /** Pusher cluster, e.g. `eu` (API host `api-<cluster>.pusher.com`). Either this or `host`. */
  cluster?: string;
  /** A Pusher-compatible server (soketi, sockudo) instead of a Pusher cluster. */
  host?: string;
  port?: number;
  /** @default true */
  useTLS?: boolean;
  /**
   * Request timeout; the SDK has none by default, so a stalled request would hang forever.
   * @default 10000
   */
  timeoutMs?: number;
  /** Loads the `pusher` SDK; imported lazily so the memory setup never loads it. */
  lib?: () => Promise<typeof PusherClient>;
}

/** The fields of the SDK's `RequestError` this driver reads. */
interface PusherRequestError {
  status?: number;
  body?: string;
  error?: { name?: string };
}

const DRIVER_NAME = "pusher";

const loadPusher = async () => {
  const imported = (await import("pusher")) as unknown as { default?: typeof PusherClient };
  return imported.default ?? (imported as unknown as typeof PusherClient);
};

/** Maps an SDK failure to the port's errors; never includes the signed request URL. */
function toRealtimeError(error: unknown, timeoutMs: number): Error {
  const failure = (error ?? {}) as PusherRequestError;
  if (failure.status !== undefined) {
    const detail = (failure.body ?? "").trim().slice(0, 200);
    return new RealtimePublishError(
      failure.status,
      `Pusher answered ${failure.status}${detail ? `: ${detail}` : "."}`,
      { cause: error },
    );
  }
  if (failure.error?.name === "AbortError") return new RealtimeTimeoutError(timeoutMs, { cause: error });
  return new RealtimePublishError(undefined, "Pusher could not be reached.", { cause: error });
}

/**
 * Publishes through the Pusher Channels HTTP API. Subscribing happens in the browser (pusher-js),
 * which joins private channels with a signature from `authorizeChannel`.
 */
const driver: RealtimeDriverFactory<PusherRealtimeOptions> = (options) => {
  for (const field of ["appId", "key", "secret"] as const) {
    if (!options[field]) throw new RealtimeNotConfiguredError(`The pusher realtime driver needs "${field}".`);
  }
  if (!options.cluster && !options.host) throw new RealtimeNotConfiguredError('The pusher realtime driver needs "cluster" or "host".');
  const timeoutMs = options.timeoutMs ?? 10_000;
  let client: Promise<PusherClient> | undefined;

  function getClient(): Promise<PusherClient> {
    client ??= (options.lib ?? loadPusher)().then((Pusher) => {
      const base = { appId: options.appId, key: options.key, secret: options.secret, useTLS: options.useTLS ?? true, timeout: timeoutMs };
      return options.host
        ? new Pusher({ ...base, host: options.host, port: options.port === undefined ? undefined : String(options.port) })
        : new Pusher({ ...base, cluster: options.cluster as string });
    });
    return client;
  }

  return {
    name: DRIVER_NAME,
    async publish(channel, event, payload) {
      const data = checkPublishable(channel, event, payload);
      const pusher = await getClient();
      try {
        await pusher.trigger(channel, event, data);
      } catch (error) {
        throw toRealtimeError(error, timeoutMs);
      }
    },
    async authorizeChannel(socketId, channel) {
      const pusher = await getClient();
      return { auth: pusher.authorizeChannel(socketId, channel).auth };
    },
  };
};

export default driver;
