import crypto from "node:crypto";
import pg from "pg";
import { TEST_POSTGRES_URL } from "./postgres-url";

// Free of vitest, so benchmarks (bench/) can use it too.

/**
 * Creates a throwaway database on the test PostgreSQL and returns its URL and a function that
 * drops it.
 */
export async function createThrowawayDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `cbs_test_${crypto.randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
