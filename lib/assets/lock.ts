import { getStore, type Sql, type SqlExecutor } from "@/lib/store";
import { processSingleton } from "@/lib/singletons";
import { lockForTransaction } from "@/lib/store/advisory-locks";

/**
 * Runs critical sections one at a time per key. A section gets the executor to use for its own
 * queries: on PostgreSQL the transaction holding the lock, so a section never waits for a second
 * pooled connection (sections of many keys could otherwise take the whole pool and wait forever),
 * and its writes commit with it or not at all.
 */
export interface KeyedLock {
  run<T>(key: string, critical: (db: SqlExecutor) => Promise<T>): Promise<T>;
}

/**
 * A per-key lock that holds across server processes. Inside one process, sections queue on a
 * promise chain per key. On PostgreSQL each section also holds a transaction-scoped advisory lock
 * on the key, so processes sharing the database (several instances, Supabase) queue as well; it
 * works behind transaction-mode poolers and is released even if the process dies. PGlite needs no
 * more: one process owns its data directory, and its transactions would block every other query.
 *
 * `namespace` keeps locks of different purposes apart when their keys are equal.
 */
export function createKeyedLock(getSql: () => Promise<Sql>, namespace: string): KeyedLock {
  const queues = new Map<string, Promise<void>>();

  const acrossProcesses = async <T>(key: string, critical: (db: SqlExecutor) => Promise<T>): Promise<T> => {
    const sql = await getSql();
    if (sql.kind !== "postgres") return critical(sql);
    return sql.transaction(async (tx) => {
      await lockForTransaction(tx, `${namespace}:${key}`);
      return critical(tx);
    });
  };

  return {
    async run(key, critical) {
      const previous = queues.get(key) ?? Promise.resolve();
      let release!: () => void;
      const finished = new Promise<void>((resolve) => (release = resolve));
      const current = previous.then(() => finished);
      queues.set(key, current);
      await previous;
      try {
        return await acrossProcesses(key, critical);
      } finally {
        release();
        // The last section of a key removes its queue, so idle keys cost nothing.
        if (queues.get(key) === current) queues.delete(key);
      }
    },
  };
}

/** The process-wide lock serialising asset-manifest updates per project. */
export function getAssetManifestLock(): KeyedLock {
  return processSingleton("assetManifestLock", () => createKeyedLock(getStore, "asset-manifest"));
}
