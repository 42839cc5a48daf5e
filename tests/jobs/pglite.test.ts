import { afterAll, beforeAll } from "vitest";
import pgBoss from "@/lib/jobs/drivers/pg-boss";
import type { Sql } from "@/lib/store";
import { openPglite } from "@/lib/store/pglite";
import { testJobQueueDriver } from "./contract";

let sql: Sql;

beforeAll(async () => {
  sql = await openPglite(undefined);
});

afterAll(async () => {
  await sql?.close();
});

// The embedded default: pg-boss runs on PGlite itself, every queue of the suite on one store.
testJobQueueDriver({ name: "pg-boss on PGlite", open: (options) => pgBoss({ ...options, sql }) });
