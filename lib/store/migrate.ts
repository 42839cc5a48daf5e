import fs from "node:fs/promises";
import path from "node:path";
import type { Sql } from "./port";
import { lockForTransaction } from "./advisory-locks";

export const MIGRATIONS_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "supabase", "migrations");

/** Arbitrary constant key: serialises concurrent migrators on one PostgreSQL. */
const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Applies every `supabase/migrations/<version>_<name>.sql` not yet recorded in
 * `app_migrations`, in version order, all in one transaction. Safe to run on every start
 * and from several processes at once.
 */
export async function migrate(sql: Sql, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await fs.readdir(dir)).filter((file) => file.endsWith(".sql")).sort();
  return sql.transaction(async (tx) => {
    await lockForTransaction(tx, MIGRATION_LOCK_KEY);
    await tx.exec(
      `create table if not exists app_migrations (
         version text primary key,
         name text not null,
         applied_at timestamptz not null default now()
       )`,
    );
    const applied = new Set(
      (await tx.query<{ version: string }>("select version from app_migrations")).rows.map((row) => row.version),
    );
    const newlyApplied: string[] = [];
    for (const file of files) {
      const [version, ...rest] = path.basename(file, ".sql").split("_");
      if (applied.has(version)) continue;
      await tx.exec(await fs.readFile(path.join(/*turbopackIgnore: true*/ dir, file), "utf8"));
      await tx.query("insert into app_migrations (version, name) values ($1, $2)", [version, rest.join("_")]);
      newlyApplied.push(file);
    }
    return newlyApplied;
  });
}
