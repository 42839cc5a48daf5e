import { isBootAliveSql, type InstanceIdentity } from "./instances";
import type { SqlExecutor } from "./port";

/** Which instance boot reads the output of a project's backend dev server. */
export interface DevServerLease {
  projectId: string;
  sandboxId: string;
  /** Null once its owner handed it back (shutdown): anyone may take it at once. */
  ownerInstanceId: string | null;
  ownerBootId: string | null;
  /** The server's process in the sandbox. */
  pid: number;
}

interface LeaseRow {
  project_id: string;
  sandbox_id: string;
  owner_instance_id: string | null;
  owner_boot_id: string | null;
  pid: number;
}

const toLease = (row: LeaseRow): DevServerLease => ({
  projectId: row.project_id,
  sandboxId: row.sandbox_id,
  ownerInstanceId: row.owner_instance_id,
  ownerBootId: row.owner_boot_id,
  pid: row.pid,
});

/** A lease nobody alive holds: handed back, or its owner boot died or restarted. */
const ORPHANED = `(l.owner_instance_id is null or not ${isBootAliveSql("l.owner_instance_id", "l.owner_boot_id")})`;

/** Takes the lease of a project's backend dev server, started as `pid`, for `owner`, whoever held it. */
export async function takeDevServerLease(
  db: SqlExecutor,
  lease: { projectId: string; sandboxId: string; owner: InstanceIdentity; pid: number },
): Promise<void> {
  await db.query(
    `insert into backend_dev_server_leases (project_id, sandbox_id, owner_instance_id, owner_boot_id, pid)
     values ($1, $2, $3, $4, $5)
     on conflict (project_id) do update
       set sandbox_id = excluded.sandbox_id, owner_instance_id = excluded.owner_instance_id,
           owner_boot_id = excluded.owner_boot_id, pid = excluded.pid, updated_at = now()`,
    [lease.projectId, lease.sandboxId, lease.owner.instanceId, lease.owner.bootId, lease.pid],
  );
}

/** The lease of a project, with whether a live instance boot holds it. */
export async function getDevServerLease(db: SqlExecutor, projectId: string): Promise<(DevServerLease & { held: boolean }) | null> {
  const { rows } = await db.query<LeaseRow & { orphaned: boolean }>(
    `select l.*, ${ORPHANED} as orphaned from backend_dev_server_leases l where l.project_id = $1`,
    [projectId],
  );
  return rows[0] ? { ...toLease(rows[0]), held: !rows[0].orphaned } : null;
}

/** Project ids of the leases nobody alive holds. */
export async function listOrphanedDevServerLeases(db: SqlExecutor): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(`select l.project_id from backend_dev_server_leases l where ${ORPHANED}`);
  return rows.map((row) => row.project_id);
}

/**
 * Takes an orphaned lease for `owner`, keeping its pid (the server may still run). Returns the
 * lease when this caller won it, null when someone alive holds it (another instance was faster).
 */
export async function claimOrphanedDevServerLease(db: SqlExecutor, projectId: string, owner: InstanceIdentity): Promise<DevServerLease | null> {
  const { rows } = await db.query<LeaseRow>(
    `update backend_dev_server_leases l
        set owner_instance_id = $2, owner_boot_id = $3, updated_at = now()
      where l.project_id = $1 and ${ORPHANED}
      returning l.*`,
    [projectId, owner.instanceId, owner.bootId],
  );
  return rows[0] ? toLease(rows[0]) : null;
}

/**
 * Hands back the leases `owner` holds, all of them (shutdown) or one project's, so other
 * instances take them at once. Returns how many were handed back.
 */
export async function releaseDevServerLeases(db: SqlExecutor, owner: InstanceIdentity, projectId?: string): Promise<number> {
  const { rowCount } = await db.query(
    `update backend_dev_server_leases set owner_instance_id = null, owner_boot_id = null, updated_at = now()
      where owner_instance_id = $1 and owner_boot_id = $2 and ($3::uuid is null or project_id = $3::uuid)`,
    [owner.instanceId, owner.bootId, projectId ?? null],
  );
  return rowCount;
}

/** Drops the lease of a server that ended, unless another owner or a newer server has it since. */
export async function dropDevServerLease(db: SqlExecutor, projectId: string, owner: InstanceIdentity, pid: number): Promise<void> {
  await db.query(
    `delete from backend_dev_server_leases
      where project_id = $1 and owner_instance_id = $2 and owner_boot_id = $3 and pid = $4`,
    [projectId, owner.instanceId, owner.bootId, pid],
  );
}

/** Drops the lease of a sandbox's server that was stopped on purpose: nobody may bring it back. */
export async function deleteDevServerLeaseOfSandbox(db: SqlExecutor, sandboxId: string): Promise<void> {
  await db.query("delete from backend_dev_server_leases where sandbox_id = $1", [sandboxId]);
}
