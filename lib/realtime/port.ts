/** One published event as subscribers receive it. */
export interface RealtimeMessage<Payload = unknown> {
  /** Unique within one driver instance. */
  id: string;
  channel: string;
  event: string;
  payload: Payload;
}

export type RealtimeListener = (message: RealtimeMessage) => void;

/** What a browser client (pusher-js) needs to join a private channel: Pusher's `auth` string. */
export interface ChannelAuthorization {
  auth: string;
}

/**
 * The realtime port. `publish` is required; `subscribe` is an optional capability of drivers that
 * deliver to this process's subscribers (memory, and the fan-out drivers postgres and redis, which
 * deliver every instance's events on every instance), and `authorizeChannel` of drivers whose
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
  subscribe?(channel: string, listener: RealtimeListener): () => void;
  /**
   * Signs a client's request to join private `channel` over its connection `socketId`. Call it
   * only after checking that the caller may read the channel.
   */
  authorizeChannel?(socketId: string, channel: string): Promise<ChannelAuthorization>;
  /**
   * Resolves once `subscribe` receives every event published from then on, on any instance (a
   * fan-out driver's listening connection is up). Absent when subscribing takes effect at once.
   */
  ready?(): Promise<void>;
  /**
   * Calls `callback` each time the driver's listening connection is back after it was lost:
   * events published meanwhile were not delivered to this instance's subscribers, who catch up
   * from the stored history. Returns the function that stops the calls. Absent when nothing can
   * be missed (in-process delivery).
   */
  onResumed?(callback: () => void): () => void;
  /** Releases the driver's connections. */
  close?(): Promise<void>;
}

/** A driver is a plain factory from its options to a port instance. */
export type RealtimeDriverFactory<Options, Instance extends Realtime = Realtime> = (options: Options) => Instance;
