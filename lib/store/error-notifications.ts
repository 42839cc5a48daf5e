import type { SqlExecutor } from "./sql";

/** One stored notification; `id` is increasing per database and survives restarts. */
export interface StoredNotificationRow<Payload> {
  id: string;
  payload: Payload;
}

/** Event ids are the decimal row ids; anything else cannot name a row. */
const ROW_ID = /^[0-9]{1,18}$/;

/**
 * Stores `payload` for `projectId` and trims the project's history to its newest `keep` rows.
 * @returns the new row's id
 */
export async function insertErrorNotification(db: SqlExecutor, projectId: string, payload: unknown, keep: number): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    "insert into error_notifications (project_id, payload) values ($1, $2) returning id::text as id",
    [projectId, JSON.stringify(payload)],
  );
  await db.query(
    `delete from error_notifications
      where project_id = $1
        and id <= (select id from error_notifications where project_id = $1 order by id desc offset $2 limit 1)`,
    [projectId, keep],
  );
  return rows[0].id;
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
