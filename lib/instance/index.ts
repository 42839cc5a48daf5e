import crypto from "node:crypto";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import { getStore, pingStore, type Sql } from "@/lib/store";
import { registerInstance, renewInstance, type InstanceIdentity } from "@/lib/store/instances";

/** Heartbeats an instance may miss before other instances count it dead. */
export const MISSED_HEARTBEATS = 3;

interface Registration {
  db: Sql;
  identity: Promise<InstanceIdentity>;
  heartbeat?: NodeJS.Timeout;
  stopped: boolean;
}

const INSTANCE = "instance";

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

function register(db: Sql): Registration {
  const { INSTANCE_ID: instanceId, INSTANCE_HEARTBEAT_MS: intervalMs } = getConfig();
  // One boot id per process, kept when the registration is redone: two ids in one process would
  // each see the other's runs as owned by a dead boot.
  const identity = { instanceId, bootId: processSingleton("bootId", () => crypto.randomUUID()) };
  const registration: Registration = {
    db,
    stopped: false,
    identity: registerInstance(db, identity, intervalMs * MISSED_HEARTBEATS).then(() => {
      if (!registration.stopped) registration.heartbeat = startHeartbeat(db, identity, intervalMs);
      return identity;
    }),
  };
  registration.identity.catch(() => resetProcessSingleton(INSTANCE, registration));
  return registration;
}

function stop(registration: Registration): void {
  registration.stopped = true;
  clearInterval(registration.heartbeat);
}

/**
 * This process's identity in `db` (instance id + boot id), registered on first use; from then on
 * a heartbeat renews it every INSTANCE_HEARTBEAT_MS until the registration is reset (shutdown,
 * tests). Runs owned by a boot that stopped beating, or whose instance id registered a newer boot
 * (the process restarted), are taken over at once; other instances count a stopped one dead once
 * its last beat expires.
 */
export function currentInstance(db: Sql): Promise<InstanceIdentity> {
  const registration = processSingleton(INSTANCE, () => register(db), { close: stop });
  if (registration.db === db) return registration.identity;
  void resetProcessSingleton(INSTANCE);
  return currentInstance(db);
}

/** GET /api/health: this instance's drivers, once its store answers a query. */
export async function healthReport() {
  const config = getConfig();
  const db = await getStore();
  await pingStore(db);
  return {
    ok: true,
    store: db.kind,
    blob: config.BLOB_DRIVER,
    sandbox: config.SANDBOX_DRIVER,
    realtime: config.REALTIME_DRIVER,
    backendProvider: config.BACKEND_PROVIDER,
  };
}
