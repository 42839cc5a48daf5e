import { RealtimeInvalidNameError, RealtimePayloadTooLargeError } from "./errors";

/**
 * Pusher: "The data content (POST body) of events must be smaller than 10kB"; larger ones get a 413.
 * Read as 10 000 bytes, the stricter reading. Every driver enforces it, so an oversized event
 * fails in development as it would in production.
 */
export const MAX_EVENT_DATA_BYTES = 10_000;

/** Pusher's channel and event name rules, as its server client checks them. */
const NAME_PATTERN = /^[A-Za-z0-9_\-=@,.;]{1,200}$/;

/**
 * The `data` string an event carries on the wire. Strings are JSON-encoded too, so every driver
 * delivers the same value (Pusher's SDK would pass a string through raw).
 */
export function encodeEventData(payload: unknown): string {
  return JSON.stringify(payload) ?? "null";
}

/**
 * Checks names and size before anything is sent; returns the encoded data.
 * @throws RealtimeInvalidNameError, RealtimePayloadTooLargeError
 */
export function checkPublishable(channel: string, event: string, payload: unknown): string {
  if (!NAME_PATTERN.test(channel)) throw new RealtimeInvalidNameError(`Invalid realtime channel name "${channel.slice(0, 200)}".`);
  if (!NAME_PATTERN.test(event)) throw new RealtimeInvalidNameError(`Invalid realtime event name "${event.slice(0, 200)}".`);
  const data = encodeEventData(payload);
  const size = Buffer.byteLength(data);
  if (size > MAX_EVENT_DATA_BYTES) throw new RealtimePayloadTooLargeError(size, MAX_EVENT_DATA_BYTES);
  return data;
}
