import type { SqlExecutor } from "./port";

/** One stored notification; `id` is increasing per database and survives restarts. */
export interface StoredNotificationRow<Payload> {
  id: string;
  payload: Payload;
}

/** Event ids are the decimal row ids; anything else cannot name a row. */
const ROW_ID = /^[0-9]{1,18}$/;

/** An error that is stored once while it is unresolved: a repeat of `fingerprint` from `source` is not. */
export interface ErrorIdentity {
  source: string;
  fingerprint: string;
}

/**
 * Stores `payload` for `projectId` and trims the project's history to its newest `keep` rows.
 * With an `identity`, nothing is stored while an unresolved row of the same source and
 * fingerprint is kept.
 * @returns the new row's id; null when a repeat was not stored
 */
export async function insertErrorNotification(
  db: SqlExecutor,
  projectId: string,
  payload: unknown,
  keep: number,
  identity?: ErrorIdentity,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `insert into error_notifications (project_id, payload, source, fingerprint)
     select $1::uuid, $2::jsonb, $3::text, $4::text
      where $4::text is null or not exists (
        select 1 from error_notifications
         where project_id = $1::uuid and source = $3::text and fingerprint = $4::text and resolved_at is null)
     returning id::text as id`,
    [projectId, JSON.stringify(payload), identity?.source ?? null, identity?.fingerprint ?? null],
  );
  if (rows.length === 0) return null;
  await db.query(
    `delete from error_notifications
      where project_id = $1
        and id <= (select id from error_notifications where project_id = $1 order by id desc offset $2 limit 1)`,
    [projectId, keep],
  );
  return rows[0].id;
}

/**
 * Marks every unresolved error of `source` in the project resolved at `resolvedAt` (ISO 8601),
 * in the column and in the stored payload (`resolvedAt`), so history readers see it.
 * @returns the fingerprints resolved
 */
export async function resolveErrorNotifications(db: SqlExecutor, projectId: string, source: string, resolvedAt: string): Promise<string[]> {
  const { rows } = await db.query<{ fingerprint: string }>(
    `update error_notifications
        set resolved_at = $3::timestamptz, payload = payload || jsonb_build_object('resolvedAt', $4::text)
      where project_id = $1 and source = $2 and resolved_at is null and fingerprint is not null
      returning fingerprint`,
    // Twice: one parameter has one type, and the payload keeps the ISO form as given.
    [projectId, source, resolvedAt, resolvedAt],
  );
  return [...new Set(rows.map((row) => row.fingerprint))];
}

/**
 * The project's newest `limit` notifications after `afterId` (all kept ones when it is null or
 * not a row id), oldest first.
 */
export async function listErrorNotifications<Payload>(
  db: SqlExecutor,
  projectId: string,
  options: { afterId?: string | null; limit: number },
): Promise<StoredNotificationRow<Payload>[]> {
  const afterId = options.afterId && ROW_ID.test(options.afterId) ? options.afterId : "0";
  const { rows } = await db.query<StoredNotificationRow<Payload>>(
    // Ordered by the bigint column, not by the text `id` it is returned as.
    `select n.id::text as id, n.payload from error_notifications n
      where n.project_id = $1 and n.id > $2::bigint
      order by n.id desc limit $3`,
    [projectId, afterId, options.limit],
  );
  return rows.reverse();
}
