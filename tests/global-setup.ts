import fs from "node:fs";
import path from "node:path";
import { createClient } from "@redis/client";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { parseConfig } from "@/lib/config";
import { AppToolchain } from "@/lib/toolchain";
import { TEST_POSTGRES_URL } from "./helpers/postgres-url";
import { TEST_REDIS_URL } from "./helpers/redis-url";

declare module "vitest" {
  interface ProvidedContext {
    /** Whether the test PostgreSQL answered; the Postgres suites skip when it did not. */
    postgresAvailable: boolean;
    /** Whether the test Redis answered; the Redis suites skip when it did not. */
    redisAvailable: boolean;
  }
}

/** Fails the run at once, before the minutes of toolchain install, when the browser tests cannot run. */
function requireChromium(executablePath: string): void {
  if (fs.existsSync(executablePath)) return;
  throw new Error(
    `Chromium was not found at ${executablePath}; the screenshot and browser tests need it. ` +
      "Install it with `sudo apt-get install -y chromium` (what .ci/run does), or point CHROMIUM_PATH at a Chromium binary.",
  );
}

/**
 * Whether the test PostgreSQL is reachable. Without it the Postgres suites are skipped with a
 * message, unless REQUIRE_POSTGRES is set (CI sets it), which makes its absence fail the run.
 */
async function probePostgres(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch (error) {
    const reason = `PostgreSQL at ${TEST_POSTGRES_URL} is not reachable (${(error as Error).message})`;
    if (/^(1|true|yes)$/i.test(process.env.REQUIRE_POSTGRES ?? "")) {
      throw new Error(`${reason}, and REQUIRE_POSTGRES is set. Start it, or set TEST_POSTGRES_URL.`);
    }
    console.warn(`\n  ${reason}: the PostgreSQL suites are skipped. Set REQUIRE_POSTGRES=1 to make them mandatory.\n`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Like probePostgres, for the test Redis, made mandatory by REQUIRE_REDIS (CI sets it). */
async function probeRedis(): Promise<boolean> {
  const client = createClient({ url: TEST_REDIS_URL, socket: { connectTimeout: 5_000, reconnectStrategy: false } });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (error) {
    const reason = `Redis at ${TEST_REDIS_URL} is not reachable (${(error as Error).message})`;
    if (/^(1|true|yes)$/i.test(process.env.REQUIRE_REDIS ?? "")) {
      throw new Error(`${reason}, and REQUIRE_REDIS is set. Start it, or set TEST_REDIS_URL.`);
    }
    console.warn(`\n  ${reason}: the Redis suites are skipped. Set REQUIRE_REDIS=1 to make them mandatory.\n`);
    return false;
  } finally {
    client.destroy();
  }
}

/**
 * Checks the machine's peers, then prepares the app toolchain once per run (the first run on a
 * machine installs it from npm, with progress lines); every test file's sandboxes hard-link it.
 */
export default async function setup(project: TestProject): Promise<void> {
  const { APP_TOOLCHAIN_DIR, CHROMIUM_PATH } = parseConfig(process.env);
  requireChromium(CHROMIUM_PATH);
  project.provide("postgresAvailable", await probePostgres());
  project.provide("redisAvailable", await probeRedis());
  const toolchain = new AppToolchain({ dir: APP_TOOLCHAIN_DIR, onProgress: (line) => console.log(line) });
  await toolchain.prepare(path.resolve("templates", "app"));
}
