import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createKeyedLock, manifestEntryOf, readAssetManifest, storeAsset, type AcceptedFile, type KeyedLock } from "@/lib/assets";
import { getBlobStore } from "@/lib/blob";
import { getConfig } from "@/lib/config";
import { getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { resetProcessSingleton } from "@/lib/singletons";
import { openStore, type Sql } from "@/lib/store";
import { openPostgres } from "@/lib/store/drivers/postgres";
import { listProjectAssets } from "@/lib/store/assets";
import { insertProject } from "@/lib/store/projects";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { createTestUser } from "../helpers/users";
import { sample } from "./samples";

// Two stores on one PostgreSQL database, each with its own connection pool and its own lock:
// two server processes sharing the database, where only the database can order them.
let database: Awaited<ReturnType<typeof createThrowawayDatabase>>;
let stores: Sql[];
let locks: KeyedLock[];
let sandbox: Sandbox;

beforeAll(async () => {
  database = await createThrowawayDatabase();
  stores = [
    await openStore({ databaseUrl: database.url, dataDir: getConfig().DATA_DIR }),
    await openStore({ databaseUrl: database.url, dataDir: getConfig().DATA_DIR }),
  ];
  locks = stores.map((store) => createKeyedLock(async () => store, "asset-manifest"));
  await resetProcessSingleton("sandboxProvider");
  sandbox = await getSandboxProvider().create();
});
afterAll(async () => {
  await getSandboxProvider().kill(sandbox.sandboxId);
  for (const store of stores) await store.close();
  await database.drop();
});

async function acceptedPng(name: string, size: number): Promise<AcceptedFile> {
  const file = path.join(getConfig().DATA_DIR, `${crypto.randomUUID()}.png`);
  const bytes = sample("png", size);
  await fs.writeFile(file, bytes);
  return { path: file, filename: name, contentType: "image/png", size, sha256: createHash("sha256").update(bytes).digest("hex") };
}

describeWithPostgres("asset manifest updates across processes sharing PostgreSQL", () => {
  it("keeps all 20 entries when 20 uploads race through two processes", async () => {
    const owner = await createTestUser(stores[0], "Owner");
    const { id: projectId } = await insertProject(stores[0], { ownerId: owner.user.id, name: "race" });
    const target = { userId: owner.user.id, projectId, sandbox };
    const files = await Promise.all(Array.from({ length: 20 }, (_, index) => acceptedPng(`race-${index}.png`, 300 + index)));
    await Promise.all(files.map((file, index) => storeAsset(target, file, { blobs: getBlobStore(), manifestLock: locks[index % 2] })));

    const manifest = await readAssetManifest(sandbox);
    expect(Object.keys(manifest.assets).sort()).toEqual(files.map((file) => file.filename).sort());
    files.forEach((file) => expect(manifest.assets[file.filename].size).toBe(file.size));
    // The durable record agrees with the manifest entry for entry.
    const records = await listProjectAssets(stores[0], projectId);
    expect(Object.fromEntries(records.map((record) => [record.filename, manifestEntryOf(record)]))).toEqual(manifest.assets);
  });

  it("makes a section in the second process wait for the first one's", async () => {
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const first = new Promise<void>((resolve) => (started = resolve));

    const a = locks[0].run("p", async () => {
      events.push("a start");
      started();
      await held;
      events.push("a end");
    });
    await first;
    const b = locks[1].run("p", async () => events.push("b"));
    // Waits for a condition, not a duration: the second process is queued in PostgreSQL.
    await expect.poll(() => waitingAdvisoryLocks(), { timeout: 10_000, interval: 20 }).toBe(1);
    expect(events).toEqual(["a start"]);
    release();
    await Promise.all([a, b]);
    expect(events).toEqual(["a start", "a end", "b"]);
  });
});

describeWithPostgres("asset records on PostgreSQL", () => {
  it("are written through the lock's own connection: uploads to several projects finish on a pool of one", async () => {
    const single = await openPostgres(database.url, { max: 1 });
    try {
      const lock = createKeyedLock(async () => single, "asset-manifest");
      const owner = await createTestUser(stores[0], "Owner");
      const projectIds = await Promise.all(
        ["one", "two", "three"].map(async (name) => (await insertProject(stores[0], { ownerId: owner.user.id, name })).id),
      );
      const files = await Promise.all(projectIds.map((_, index) => acceptedPng(`single-${index}.png`, 400 + index)));
      await Promise.all(
        projectIds.map((projectId, index) =>
          storeAsset({ userId: owner.user.id, projectId, sandbox }, files[index], { blobs: getBlobStore(), manifestLock: lock }),
        ),
      );
      for (const [index, projectId] of projectIds.entries()) {
        expect((await listProjectAssets(stores[0], projectId)).map((record) => record.filename)).toEqual([`single-${index}.png`]);
      }
    } finally {
      await single.close();
    }
  });
});

async function waitingAdvisoryLocks(): Promise<number> {
  const { rows } = await stores[0].query<{ waiting: number }>(
    "select count(*)::int as waiting from pg_locks where locktype = 'advisory' and not granted",
  );
  return rows[0].waiting;
}
