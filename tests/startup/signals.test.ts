import { afterEach, describe, expect, inject, it } from "vitest";
import { startProductServer, type ProductServer } from "../e2e/server";

/** The first start may build the app (`next build`) on a loaded machine. */
const START_TIMEOUT_MS = 10 * 60_000;
/** Issue 34: a signalled server exits within this. */
const EXIT_WITHIN_MS = 10_000;

let server: ProductServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Whether any process of the group `pgid` still runs. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The exit code, or a failure naming what was still running when `EXIT_WITHIN_MS` passed. */
async function exitCodeWithin(started: ProductServer): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${EXIT_WITHIN_MS} ms after the signal:\n${started.output().slice(-2000)}`)), EXIT_WITHIN_MS);
  });
  try {
    return await Promise.race([started.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

// A process manager (systemd, Docker, pm2) signals the one process it started, `npm start`, not
// its process group as a terminal's Ctrl-C does.
describe.each(["SIGINT", "SIGTERM"] as const)("%s to the npm start process alone", (signal) => {
  it("shuts the server down gracefully: exit 0, nothing of it left running", { timeout: START_TIMEOUT_MS + 60_000 }, async () => {
    server = await startProductServer({ timeoutMs: START_TIMEOUT_MS, viaNpm: true, initialisedDatabase: inject("pgliteTemplate") });
    process.kill(server.pid, signal);
    expect(await exitCodeWithin(server)).toBe(0);
    expect(server.output()).toContain(`"message":"shutting down","signal":"${signal}"`);
    // The server, its sandbox command host and anything else started under npm have ended.
    await expect.poll(() => groupAlive(server!.pid), { timeout: EXIT_WITHIN_MS, interval: 100 }).toBe(false);
  });
});
