import crypto from "node:crypto";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import type { Sql } from "@/lib/store";
import { registerInstance, renewInstance, type InstanceIdentity } from "@/lib/store/instances";

/** Heartbeats an instance may miss before other instances count it dead. */
export const MISSED_HEARTBEATS = 3;

interface Registration {
  db: Sql;
  identity: Promise<InstanceIdentity>;
  heartbeat?: NodeJS.Timeout;
}

// One boot id per process, shared by every route bundle Next.js loads (hence globalThis): two
// ids in one process would each see the other's runs as owned by a dead boot.
const holder = globalThis as typeof globalThis & { __appBootId?: string; __appInstance?: Registration };

function startHeartbeat(db: Sql, identity: InstanceIdentity, intervalMs: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    renewInstance(db, identity, intervalMs * MISSED_HEARTBEATS).then(
      (alive) => {
        if (alive) return;
        // Another process registered under this instance id: this boot now counts as dead and
        // its runs are taken over. Two live processes must not share INSTANCE_ID.
        log.error("another process registered this instance id; give every process its own INSTANCE_ID", {
          instanceId: identity.instanceId,
        });
        clearInterval(timer);
      },
      (error: unknown) => log.warn("instance heartbeat failed", { instanceId: identity.instanceId, error }),
    );
  }, intervalMs);
  timer.unref();
  return timer;
}

/**
 * This process's identity in `db` (instance id + boot id), registered on first use; from then on
 * a heartbeat renews it every INSTANCE_HEARTBEAT_MS. Runs owned by a boot that stopped beating,
 * or whose instance id registered a newer boot (the process restarted), are taken over at once.
 */
export function currentInstance(db: Sql): Promise<InstanceIdentity> {
  if (holder.__appInstance?.db !== db) {
    stopInstance();
    const { INSTANCE_ID: instanceId, INSTANCE_HEARTBEAT_MS: intervalMs } = getConfig();
    const identity = { instanceId, bootId: (holder.__appBootId ??= crypto.randomUUID()) };
    const registration: Registration = {
      db,
      identity: registerInstance(db, identity, intervalMs * MISSED_HEARTBEATS).then(() => {
        if (holder.__appInstance === registration) registration.heartbeat = startHeartbeat(db, identity, intervalMs);
        return identity;
      }),
    };
    registration.identity.catch(() => {
      if (holder.__appInstance === registration) holder.__appInstance = undefined;
    });
    holder.__appInstance = registration;
  }
  return holder.__appInstance!.identity;
}

/** Stops the heartbeat (shutdown, tests); other instances count this one dead once its last beat expires. */
export function stopInstance(): void {
  clearInterval(holder.__appInstance?.heartbeat);
  holder.__appInstance = undefined;
}
