import fs from "node:fs";
import path from "node:path";
import { createClient } from "@redis/client";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { parseConfig } from "@/lib/config";
import { AppToolchain } from "@/lib/toolchain";
import { acquirePgliteTemplate } from "./helpers/pglite-template";
import { TEST_POSTGRES_URL } from "./helpers/postgres-url";
import { suiteScratchDir, toolchainDirBeside } from "./helpers/scratch";
import { TEST_REDIS_URL } from "./helpers/redis-url";

declare module "vitest" {
  interface ProvidedContext {
    /** Whether the test PostgreSQL answered; the Postgres suites skip when it did not. */
    postgresAvailable: boolean;
    /** Whether the test Redis answered; the Redis suites skip when it did not. */
    redisAvailable: boolean;
    /** An embedded database, initialised and migrated, that each file's data directory starts from. */
    pgliteTemplate: string;
    /** The test files' TMPDIR, where their data directories go (tests/helpers/scratch.ts). */
    scratchTempDir: string;
    /** APP_TOOLCHAIN_DIR for the test files: on the scratch directory's file system. */
    appToolchainDir: string;
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

interface Peer {
  /** As messages name it: "PostgreSQL", "Redis". */
  name: string;
  url: string;
  /** The variable that makes the peer mandatory (CI sets it). */
  requiredBy: string;
  /** The variable that points the tests at another server. */
  urlVariable: string;
  /** Connects, answers one trivial request and disconnects; throws when the peer does not answer. */
  check: () => Promise<void>;
}

/**
 * Whether a test peer is reachable. Without it its suites are skipped with a message, unless
 * its `requiredBy` variable is set, which makes its absence fail the run.
 */
async function probe(peer: Peer): Promise<boolean> {
  try {
    await peer.check();
    return true;
  } catch (error) {
    const reason = `${peer.name} at ${peer.url} is not reachable (${(error as Error).message})`;
    if (/^(1|true|yes)$/i.test(process.env[peer.requiredBy] ?? "")) {
      throw new Error(`${reason}, and ${peer.requiredBy} is set. Start it, or set ${peer.urlVariable}.`);
    }
    console.warn(`\n  ${reason}: the ${peer.name} suites are skipped. Set ${peer.requiredBy}=1 to make them mandatory.\n`);
    return false;
  }
}

const postgres: Peer = {
  name: "PostgreSQL",
  url: TEST_POSTGRES_URL,
  requiredBy: "REQUIRE_POSTGRES",
  urlVariable: "TEST_POSTGRES_URL",
  async check() {
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      await client.query("select 1");
    } finally {
      await client.end().catch(() => undefined);
    }
  },
};

const redis: Peer = {
  name: "Redis",
  url: TEST_REDIS_URL,
  requiredBy: "REQUIRE_REDIS",
  urlVariable: "TEST_REDIS_URL",
  async check() {
    const client = createClient({ url: TEST_REDIS_URL, socket: { connectTimeout: 5_000, reconnectStrategy: false } });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.ping();
    } finally {
      client.destroy();
    }
  },
};

/**
 * Checks the machine's peers, then prepares the app toolchain once per run (the first run on a
 * machine installs it from npm, with progress lines); every test file's sandboxes hard-link it,
 * from a copy on the scratch directory's file system when that is another one.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const { APP_TOOLCHAIN_DIR, CHROMIUM_PATH } = parseConfig(process.env);
  requireChromium(CHROMIUM_PATH);
  project.provide("postgresAvailable", await probe(postgres));
  project.provide("redisAvailable", await probe(redis));
  const toolchain = new AppToolchain({ dir: APP_TOOLCHAIN_DIR, onProgress: (line) => console.log(line) });
  const templateRoot = path.resolve("templates", "app");
  const { root } = await toolchain.prepare(templateRoot);
  const scratch = suiteScratchDir();
  const tempDir = path.join(scratch, "tmp");
  project.provide("scratchTempDir", tempDir);
  project.provide("appToolchainDir", await toolchainDirBeside(scratch, templateRoot, root));
  const pglite = await acquirePgliteTemplate(tempDir);
  project.provide("pgliteTemplate", pglite.dir);
  return pglite.release;
}
