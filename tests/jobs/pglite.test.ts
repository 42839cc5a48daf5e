import { afterAll, beforeAll, expect, it } from "vitest";
import pgBoss from "@/lib/jobs/drivers/pg-boss";
import type { Sql } from "@/lib/store";
import { jobQueueDatabaseOf } from "@/lib/store/jobs";
import { openPglite } from "@/lib/store/drivers/pglite";
import { testJobQueueDriver } from "../contract/jobs";

let sql: Sql;

beforeAll(async () => {
  sql = await openPglite(undefined);
});

afterAll(async () => {
  await sql?.close();
});

// The embedded default: pg-boss runs on PGlite itself, every queue of the suite on one store.
testJobQueueDriver({ name: "pg-boss on PGlite", open: (options) => pgBoss({ ...options, sql }) });

it("runs pg-boss's multi-statement commands on the one connection, and a failed one leaves no transaction open", async () => {
  const db = jobQueueDatabaseOf(sql);
  expect((await db.executeSql("select $1::int as n", [7])).rows).toEqual([{ n: 7 }]);
  await db.executeSql("begin; create temporary table boss_probe (n int); commit;");
  await expect(db.executeSql("begin; insert into boss_probe values (1); select 1 / 0; commit;")).rejects.toThrow(/division by zero/);
  expect((await sql.query("select count(*)::int as n from boss_probe")).rows).toEqual([{ n: 0 }]);
});
