import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reloadConfig } from "@/lib/config";
import { currentInstance, MISSED_HEARTBEATS } from "@/lib/instance";
import { resetProcessSingleton } from "@/lib/singletons";
import { getStore, type Sql } from "@/lib/store";

let db: Sql;

beforeAll(async () => {
  process.env.INSTANCE_ID = "heartbeat-test";
  process.env.INSTANCE_HEARTBEAT_MS = "100";
  reloadConfig();
  db = await getStore();
});
afterAll(async () => {
  await resetProcessSingleton("instance");
});

const row = async () =>
  (
    await db.query<{ boot_id: string; last_seen_at: Date; expires_at: Date }>(
      "select boot_id, last_seen_at, expires_at from app_instances where instance_id = 'heartbeat-test'",
    )
  ).rows[0];

describe("instance identity", () => {
  it("registers one boot per process and keeps it alive with a heartbeat", async () => {
    const identity = await currentInstance(db);
    expect(await currentInstance(db)).toBe(identity);
    expect(identity.instanceId).toBe("heartbeat-test");
    const registered = await row();
    expect(registered.boot_id).toBe(identity.bootId);
    // Alive for a few missed beats past the last one.
    expect(registered.expires_at.getTime() - registered.last_seen_at.getTime()).toBe(100 * MISSED_HEARTBEATS);
    await vi.waitFor(async () => expect((await row()).last_seen_at.getTime()).toBeGreaterThan(registered.last_seen_at.getTime()), {
      timeout: 20_000,
      interval: 50,
    });
  });

  it("registers the same boot again after its heartbeat was stopped and its row removed", async () => {
    const { bootId } = await currentInstance(db);
    await db.query("delete from app_instances");
    await resetProcessSingleton("instance");
    expect((await currentInstance(db)).bootId).toBe(bootId);
    expect((await row()).boot_id).toBe(bootId);
  });
});
