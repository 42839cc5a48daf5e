import { isBootAliveSql, type InstanceIdentity } from "./instances";
import type { SqlExecutor } from "./port";

export type OperationKind = "enable" | "connect" | "oauth";
export type OperationStatus = "running" | "succeeded" | "failed";

/** One run of a provisioning flow; `steps` records what finished, so a retry resumes. */
export interface EnableOperation<Steps extends object = Record<string, unknown>> {
  id: string;
  projectId: string;
  kind: OperationKind;
  status: OperationStatus;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  /** The instance boot running the lease owner; null on runs journaled before instances existed. */
  ownerInstanceId: string | null;
  ownerBootId: string | null;
  /** Running, but its lease ran out or its owner's instance boot is no longer alive: anyone may take it over. */
  abandoned: boolean;
  steps: Steps;
  errorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface OperationRow {
  id: string;
  project_id: string;
  kind: OperationKind;
  status: OperationStatus;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  owner_instance_id: string | null;
  owner_boot_id: string | null;
  abandoned?: boolean;
  steps: Record<string, unknown>;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
}

const toOperation = <Steps extends object>(row: OperationRow): EnableOperation<Steps> => ({
  id: row.id,
  projectId: row.project_id,
  kind: row.kind,
  status: row.status,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  ownerInstanceId: row.owner_instance_id,
  ownerBootId: row.owner_boot_id,
  abandoned: row.abandoned ?? false,
  steps: row.steps as Steps,
  errorMessage: row.error_message,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * A running operation is abandoned when its lease ran out (a live owner stuck too long) or when
 * the instance boot that owns it is not alive: its heartbeat stopped, or the instance restarted
 * and registered another boot. The second case needs no wait for the lease.
 */
const ABANDONED = `(o.lease_expires_at < now() or (o.owner_instance_id is not null and not ${isBootAliveSql("o.owner_instance_id", "o.owner_boot_id")}))`;

/** The live (running) operation of a project, if any, with whether it is {@link ABANDONED}. */
export async function getRunningOperation<Steps extends object>(
  db: SqlExecutor,
  projectId: string,
): Promise<EnableOperation<Steps> | null> {
  const { rows } = await db.query<OperationRow>(
    `select o.*, ${ABANDONED} as abandoned from enable_operations o where o.project_id = $1 and o.status = 'running'`,
    [projectId],
  );
  return rows[0] ? toOperation<Steps>(rows[0]) : null;
}

/** Who takes a lease: the run (unique per request) and the instance boot it runs in. */
export interface LeaseHolder {
  leaseOwner: string;
  instance: InstanceIdentity;
  leaseMs: number;
}

/** Starts a running operation holding a lease; the partial unique index allows one per project. */
export async function insertRunningOperation<Steps extends object>(
  db: SqlExecutor,
  input: LeaseHolder & { projectId: string; kind: OperationKind; steps?: Steps },
): Promise<EnableOperation<Steps>> {
  const { rows } = await db.query<OperationRow>(
    `insert into enable_operations (project_id, kind, status, lease_owner, owner_instance_id, owner_boot_id, lease_expires_at, steps)
     values ($1, $2, 'running', $3, $4, $5, now() + make_interval(secs => $6::double precision / 1000), $7)
     returning *`,
    [
      input.projectId,
      input.kind,
      input.leaseOwner,
      input.instance.instanceId,
      input.instance.bootId,
      input.leaseMs,
      JSON.stringify(input.steps ?? {}),
    ],
  );
  return toOperation<Steps>(rows[0]);
}

/**
 * Takes over a running operation that is {@link ABANDONED} (its owner died or is stuck). Returns
 * the operation when this caller won it, null when its owner is alive or someone else won.
 */
export async function takeOverAbandonedOperation<Steps extends object>(
  db: SqlExecutor,
  operationId: string,
  holder: LeaseHolder,
): Promise<EnableOperation<Steps> | null> {
  const { rows } = await db.query<OperationRow>(
    `update enable_operations o
        set lease_owner = $2, owner_instance_id = $3, owner_boot_id = $4,
            lease_expires_at = now() + make_interval(secs => $5::double precision / 1000), updated_at = now()
      where o.id = $1 and o.status = 'running' and ${ABANDONED}
      returning o.*`,
    [operationId, holder.leaseOwner, holder.instance.instanceId, holder.instance.bootId, holder.leaseMs],
  );
  return rows[0] ? toOperation<Steps>(rows[0]) : null;
}

/**
 * Merges finished steps into the journal and renews the lease, only while `leaseOwner` still
 * holds it. Returns false when the lease was lost (another instance took over).
 */
export async function recordSteps(
  db: SqlExecutor,
  operationId: string,
  leaseOwner: string,
  leaseMs: number,
  steps: Record<string, unknown>,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update enable_operations
        set steps = steps || $4::jsonb,
            lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
            updated_at = now()
      where id = $1 and lease_owner = $2 and status = 'running'`,
    [operationId, leaseOwner, leaseMs, JSON.stringify(steps)],
  );
  return rowCount > 0;
}

/** Ends an operation; only its lease owner can. */
export async function finishOperation(
  db: SqlExecutor,
  operationId: string,
  leaseOwner: string,
  outcome: { status: "succeeded" } | { status: "failed"; errorMessage: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update enable_operations
        set status = $3, error_message = $4, lease_expires_at = null, updated_at = now()
      where id = $1 and lease_owner = $2 and status = 'running'`,
    [operationId, leaseOwner, outcome.status, outcome.status === "failed" ? outcome.errorMessage : null],
  );
  return rowCount > 0;
}

/** The most recent operation of a project (status pages, tests). */
export async function getLatestOperation<Steps extends object>(
  db: SqlExecutor,
  projectId: string,
): Promise<EnableOperation<Steps> | null> {
  const { rows } = await db.query<OperationRow>(
    "select * from enable_operations where project_id = $1 order by created_at desc limit 1",
    [projectId],
  );
  return rows[0] ? toOperation<Steps>(rows[0]) : null;
}

/** Empties the journals of a project's failed runs, so no later run inherits their backend project. */
export async function forgetFailedRuns(db: SqlExecutor, projectId: string): Promise<void> {
  await db.query("update enable_operations set steps = '{}'::jsonb where project_id = $1 and status = 'failed'", [projectId]);
}
