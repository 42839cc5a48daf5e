import type { SqlExecutor } from "./port";

/** Which process owns something: a stable instance id and the id of its current boot. */
export interface InstanceIdentity {
  instanceId: string;
  bootId: string;
}

/**
 * Registers a boot of an instance, replacing the row of its previous boot: whatever that boot
 * still owns is from now on owned by a dead process.
 */
export async function registerInstance(db: SqlExecutor, identity: InstanceIdentity, ttlMs: number): Promise<void> {
  await db.query(
    `insert into app_instances (instance_id, boot_id, expires_at)
     values ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
     on conflict (instance_id) do update
       set boot_id = excluded.boot_id, started_at = now(), last_seen_at = now(), expires_at = excluded.expires_at`,
    [identity.instanceId, identity.bootId, ttlMs],
  );
}

/**
 * Renews the liveness of this boot for `ttlMs`. False when the row belongs to another boot (a
 * process started with the same instance id) or is gone: this boot is then considered dead.
 */
export async function renewInstance(db: SqlExecutor, identity: InstanceIdentity, ttlMs: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `update app_instances
        set last_seen_at = now(), expires_at = now() + make_interval(secs => $3::double precision / 1000)
      where instance_id = $1 and boot_id = $2`,
    [identity.instanceId, identity.bootId, ttlMs],
  );
  return rowCount > 0;
}

/**
 * SQL condition: the instance boot named by two columns of the outer query is alive (its
 * heartbeat has not expired and its instance id has not registered a newer boot).
 */
export const isBootAliveSql = (instanceColumn: string, bootColumn: string): string =>
  `exists (select 1 from app_instances i
            where i.instance_id = ${instanceColumn} and i.boot_id = ${bootColumn} and i.expires_at > now())`;
