import { afterAll, beforeAll } from "vitest";
import pgBoss from "@/lib/jobs/drivers/pg-boss";
import { openStore, type Sql } from "@/lib/store";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { testJobQueueDriver } from "../contract/jobs";

describeWithPostgres("pg-boss job queue on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let sql: Sql;

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    sql = await openStore({ databaseUrl: database.url, dataDir: "unused" });
  });

  afterAll(async () => {
    await sql?.close();
    await database?.drop();
  });

  // Each queue is an instance: its own pg-boss pool on the one database.
  testJobQueueDriver({ name: "pg-boss on PostgreSQL", open: (options) => pgBoss({ ...options, sql, connectionString: database.url }) });
});
