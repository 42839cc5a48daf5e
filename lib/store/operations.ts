import type { SqlExecutor } from "./sql";

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
  steps: row.steps as Steps,
  errorMessage: row.error_message,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The live (running) operation of a project, if any. */
export async function getRunningOperation<Steps extends object>(
  db: SqlExecutor,
  projectId: string,
): Promise<EnableOperation<Steps> | null> {
  const { rows } = await db.query<OperationRow>(
    "select * from enable_operations where project_id = $1 and status = 'running'",
    [projectId],
  );
  return rows[0] ? toOperation<Steps>(rows[0]) : null;
}

/** Starts a running operation holding a lease; the partial unique index allows one per project. */
export async function insertRunningOperation<Steps extends object>(
  db: SqlExecutor,
  input: { projectId: string; kind: OperationKind; leaseOwner: string; leaseMs: number; steps?: Steps },
): Promise<EnableOperation<Steps>> {
  const { rows } = await db.query<OperationRow>(
    `insert into enable_operations (project_id, kind, status, lease_owner, lease_expires_at, steps)
     values ($1, $2, 'running', $3, now() + make_interval(secs => $4::double precision / 1000), $5)
     returning *`,
    [input.projectId, input.kind, input.leaseOwner, input.leaseMs, JSON.stringify(input.steps ?? {})],
  );
  return toOperation<Steps>(rows[0]);
}

/**
 * Takes over a running operation whose lease has expired (its owner died). Returns the
 * operation when this caller won it, null when the lease is still live or someone else won.
 */
export async function takeOverExpiredOperation<Steps extends object>(
  db: SqlExecutor,
  operationId: string,
  leaseOwner: string,
  leaseMs: number,
): Promise<EnableOperation<Steps> | null> {
  const { rows } = await db.query<OperationRow>(
    `update enable_operations
        set lease_owner = $2, lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
            updated_at = now()
      where id = $1 and status = 'running' and lease_expires_at < now()
      returning *`,
    [operationId, leaseOwner, leaseMs],
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
