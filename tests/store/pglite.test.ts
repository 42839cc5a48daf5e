import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore } from "@/lib/store";
import { describeStoreSuite } from "../contract/store";

describeStoreSuite("pglite", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-pglite-"));
  const sql = await openStore({ dataDir });
  return {
    sql,
    cleanup: async () => {
      await sql.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
