import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, pgliteDirOf } from "@/lib/store";
import { initializePgliteApart } from "@/lib/store/drivers/pglite";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-pglite-init-"));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe("initializePgliteApart (the server's first start)", () => {
  it("initialises a new directory in a child process, which the store then opens, migrates and keeps data in", async () => {
    const dir = pgliteDirOf(dataDir);
    await initializePgliteApart(dir);
    expect(fs.existsSync(path.join(dir, "PG_VERSION"))).toBe(true);
    const sql = await openStore({ dataDir });
    await sql.exec("create table kept (value text)");
    await sql.query("insert into kept values ($1)", ["written after the child's initdb"]);
    await sql.close();

    // Initialised: a second call leaves it alone, and the data is there on the next open.
    await initializePgliteApart(dir);
    const reopened = await openStore({ dataDir });
    expect((await reopened.query<{ value: string }>("select value from kept")).rows).toEqual([{ value: "written after the child's initdb" }]);
    await reopened.close();
  });
});
