import { openStore } from "@/lib/store";
import { createThrowawayDatabase, describeWithPostgres } from "../helpers/postgres";
import { describeStoreSuite } from "../contract/store";

describeStoreSuite("postgres", async () => {
  const database = await createThrowawayDatabase();
  const sql = await openStore({ databaseUrl: database.url, dataDir: "unused" });
  return {
    sql,
    cleanup: async () => {
      await sql.close();
      await database.drop();
    },
  };
}, describeWithPostgres);
