/** One published event as subscribers receive it. */
export interface RealtimeMessage<Payload = unknown> {
  /** Increasing within one driver instance; SSE sends it as `id:` so clients can resume. */
  id: string;
  channel: string;
  event: string;
  payload: Payload;
}

export type RealtimeListener = (message: RealtimeMessage) => void;

export interface SubscribeOptions {
  /**
   * Replays the retained messages published after this id (an SSE client's `Last-Event-ID`).
   * An id from another driver instance (e.g. before a restart) replays everything retained.
   */
  afterId?: string | null;
}

/** What a browser client (pusher-js) needs to join a private channel: Pusher's `auth` string. */
export interface ChannelAuthorization {
  auth: string;
}

/**
 * The realtime port. `publish` is required; `subscribe` is an optional capability of drivers that
 * deliver inside this process (the memory driver), and `authorizeChannel` of drivers whose
 * browser clients join private channels themselves (pusher). Callers check for the capability
 * instead of checking which driver they have.
 */
export interface Realtime {
  /** Driver name, as selected by `REALTIME_DRIVER`. */
  readonly name: string;
  /**
   * Sends `payload` as event `event` on `channel`. Rejects with a `RealtimeError` (names invalid,
   * payload over the size limit, or delivery failed); never drops an event silently.
   */
  publish(channel: string, event: string, payload: unknown): Promise<void>;
  /** Delivers every later event of `channel` to `listener`; returns the unsubscribe function. */
  subscribe?(channel: string, listener: RealtimeListener, options?: SubscribeOptions): () => void;
  /**
   * Signs a client's request to join private `channel` over its connection `socketId`. Call it
   * only after checking that the caller may read the channel.
   */
  authorizeChannel?(socketId: string, channel: string): Promise<ChannelAuthorization>;
}

/** A driver is a plain factory from its options to a port instance. */
export type RealtimeDriverFactory<Options, Instance extends Realtime = Realtime> = (options: Options) => Instance;
