/**
 * Process-wide singletons (the store, the sandbox provider, the browser pool …). They live on
 * globalThis, not in module variables, because Next.js loads instrumentation and every route in
 * bundles of their own, each with its own copy of a module: one value per process must be shared.
 */
interface Entry {
  value: unknown;
  close?: (value: unknown) => unknown;
  closeLast: boolean;
}

export interface SingletonOptions<T> {
  /** Releases what the value holds (connections, listeners, timers) when it is reset. */
  close?: (value: T) => unknown;
  /** Closed after every other singleton, which may still use it while closing (the store). */
  closeLast?: boolean;
}

const registry = ((globalThis as typeof globalThis & { __processSingletons?: Map<string, Entry> }).__processSingletons ??=
  new Map<string, Entry>());

/** The value kept under `key`, created by `create` on first use. */
export function processSingleton<T>(key: string, create: () => T, options: SingletonOptions<T> = {}): T {
  let entry = registry.get(key);
  if (!entry) {
    entry = { value: create(), close: options.close as Entry["close"], closeLast: options.closeLast ?? false };
    registry.set(key, entry);
  }
  return entry.value as T;
}

/**
 * Forgets `key` at once and closes its value, so the next use creates it anew (the config after
 * the environment changed). With `onlyIf`, only while that is still the value: a value that
 * failed forgets itself without dropping a newer one.
 */
export async function resetProcessSingleton(key: string, onlyIf?: unknown): Promise<void> {
  const entry = registry.get(key);
  if (!entry || (onlyIf !== undefined && entry.value !== onlyIf)) return;
  registry.delete(key);
  await entry.close?.(entry.value);
}

/**
 * Closes and forgets every singleton (shutdown, and the end of each test file). Values with a
 * `close` are closed the newest first, those marked `closeLast` after all others; plain values
 * (the config, lock sets) are forgotten only then, as closing may still use them. Every one is
 * closed even when one fails.
 */
export async function resetProcessSingletons(): Promise<void> {
  const closable = [...registry].reverse().filter(([, entry]) => entry.close);
  const ordered = [...closable.filter(([, entry]) => !entry.closeLast), ...closable.filter(([, entry]) => entry.closeLast)];
  const failures: unknown[] = [];
  for (const [key] of ordered) {
    await resetProcessSingleton(key).catch((error: unknown) => failures.push(error));
  }
  registry.clear();
  if (failures.length > 0) throw new AggregateError(failures, "closing the process singletons failed");
}
