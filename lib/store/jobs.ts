import type { Sql, SqlExecutor } from "./port";

/** The schema pg-boss keeps its tables in (it creates and migrates them itself at start). */
export const JOB_QUEUE_SCHEMA = "pgboss";

/** PostgreSQL's "cannot insert multiple commands into a prepared statement" (syntax_error: a real one fails again in `exec`). */
const MULTIPLE_COMMANDS = "42601";

/**
 * pg-boss's database adapter over the embedded store: PGlite is one connection in this process,
 * so the queue shares it instead of opening its own pool. Its multi-statement commands
 * (migrations, `BEGIN; …; COMMIT` maintenance) carry no parameters and go through `exec`, which
 * answers no rows; pg-boss reads none from them.
 */
export function jobQueueDatabaseOf(sql: Sql): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } {
  return {
    async executeSql(text, values) {
      if (values?.length) return sql.query(text, values);
      try {
        return await sql.query(text);
      } catch (error) {
        if ((error as { code?: string }).code !== MULTIPLE_COMMANDS) throw error;
        try {
          await sql.exec(text);
        } catch (failure) {
          // A `BEGIN; …` that failed half-way would leave the one connection in an aborted transaction.
          await sql.exec("rollback").catch(() => undefined);
          throw failure;
        }
        return { rows: [] };
      }
    },
  };
}

/**
 * Which of `kinds` have a job waiting to be taken now: one read on pg-boss's index of waiting jobs,
 * so an idle queue polls with it instead of a take (an update) per kind.
 */
export async function kindsWithWaitingJobs(db: SqlExecutor, kinds: string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `select distinct name from ${JOB_QUEUE_SCHEMA}.job where name = any($1::text[]) and state < 'active' and start_after < now()`,
    [kinds],
  );
  return new Set(rows.map((row) => row.name));
}

/** Running jobs other than `jobId`: every one, and those on `sandboxKey`. */
export async function countOtherRunningJobs(
  db: SqlExecutor,
  jobId: string,
  sandboxKey: string | null,
): Promise<{ running: number; onSandbox: number }> {
  const { rows } = await db.query<{ running: number; on_sandbox: number }>(
    `select count(*)::int as running, count(*) filter (where data->>'sandboxKey' = $2)::int as on_sandbox
       from ${JOB_QUEUE_SCHEMA}.job where state = 'active' and id <> $1::uuid`,
    [jobId, sandboxKey],
  );
  return { running: rows[0].running, onSandbox: rows[0].on_sandbox };
}

/**
 * Puts a job this instance took back in its queue, to be taken again after `delayMs`, without
 * counting an attempt (pg-boss counts one per start of a job that had started before).
 */
export async function deferJob(db: SqlExecutor, jobId: string, delayMs: number): Promise<void> {
  await db.query(
    `update ${JOB_QUEUE_SCHEMA}.job
        set state = 'created', started_on = null, start_after = now() + make_interval(secs => $2::double precision / 1000)
      where id = $1::uuid and state = 'active'`,
    [jobId, delayMs],
  );
}

/**
 * Renews a running job's expiry (pg-boss expires `started_on + expire_in`): the instance running
 * it is alive. A job whose instance died is no longer renewed, expires and is retried elsewhere.
 */
export async function renewRunningJob(db: SqlExecutor, jobId: string): Promise<void> {
  await db.query(`update ${JOB_QUEUE_SCHEMA}.job set started_on = now() where id = $1::uuid and state = 'active'`, [jobId]);
}
