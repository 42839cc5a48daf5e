const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids reach SQL only when they are UUIDs; anything else cannot name a row. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
