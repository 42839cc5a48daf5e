import { afterAll, beforeAll, expect, it } from "vitest";
import postgres from "@/lib/realtime/drivers/postgres";
import { openStore, type Sql } from "@/lib/store";
import { MAX_NOTIFY_PAYLOAD_BYTES } from "@/lib/store/notifications";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { collectMessages, testRealtimeDriver } from "../contract/realtime";

describeWithPostgres("postgres realtime driver", () => {
  let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let store: Sql;

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    store = await openStore({ databaseUrl: database.url, dataDir: "unused" });
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const create = () => postgres({ connectionString: database.url, db: async () => store });

  testRealtimeDriver({
    name: "postgres",
    create,
    sharedBus: true,
    additionalTests() {
      const channel = "project-errors";

      it("sends an event over the NOTIFY limit through a stored row, in order", async () => {
        const realtime = create();
        try {
          const collector = collectMessages();
          realtime.subscribe(channel, collector.listener);
          await realtime.ready();
          const large = "é".repeat(MAX_NOTIFY_PAYLOAD_BYTES / 2);
          await realtime.publish(channel, "large", large);
          await realtime.publish(channel, "small", "after");
          await collector.received(2);
          expect(collector.messages.map((message) => message.payload)).toEqual([large, "after"]);
          const { rows } = await store.query<{ count: number }>(
            "select count(*)::int as count from realtime_messages where body like '%\"event\":\"large\"%'",
          );
          expect(rows[0].count).toBe(1);
        } finally {
          await realtime.close();
        }
      });

      it("ignores a notification on its channel that is not an event, and goes on", async () => {
        const realtime = create();
        try {
          const collector = collectMessages();
          realtime.subscribe(channel, collector.listener);
          await realtime.ready();
          await store.query("select pg_notify('realtime_events', $1)", ['{"id":"x","channel":"project-errors","event":"e","data":"not json"}']);
          await store.query("select pg_notify('realtime_events', 'not an envelope')");
          await realtime.publish(channel, "after", 1);
          await collector.received(1);
          expect(collector.messages.map((message) => message.event)).toEqual(["after"]);
        } finally {
          await realtime.close();
        }
      });

      it("settles ready() when closed before a database that never answers", async () => {
        // Port 1 refuses connections: the listener keeps retrying until it is closed.
        const realtime = postgres({ connectionString: "postgres://postgres@127.0.0.1:1/none", db: async () => store });
        const ready = realtime.ready();
        await realtime.close();
        await expect(ready).rejects.toThrow("The postgres realtime driver was closed before it was listening.");
      });

      it("listens again after its connection is ended by the server, and says so", async () => {
        const realtime = create();
        try {
          const collector = collectMessages();
          realtime.subscribe(channel, collector.listener);
          let resumed = 0;
          realtime.onResumed(() => (resumed += 1));
          await realtime.ready();
          const listening = () =>
            store.query<{ pid: number }>(
              "select pid from pg_stat_activity where datname = current_database() and query ilike 'listen %' and pid <> pg_backend_pid()",
            );
          const [{ pid }] = (await listening()).rows;
          await store.query("select pg_terminate_backend($1)", [pid]);
          // The new session shows its LISTEN in pg_stat_activity once it is in effect.
          await expect.poll(async () => (await listening()).rows.map((row) => row.pid).filter((other) => other !== pid), { timeout: 20_000 }).toHaveLength(1);
          await realtime.publish(channel, "after-reconnect", 1);
          await collector.received(1);
          expect(collector.messages.map((message) => message.event)).toEqual(["after-reconnect"]);
          // Its subscribers are told that events may have been missed in between.
          expect(resumed).toBe(1);
        } finally {
          await realtime.close();
        }
      });
    },
  });
});
