import { getConfig, type Config } from "@/lib/config";
import { seedDemoIfEmpty } from "@/lib/auth/seed";
import { EMULATOR_MOUNT_PATH, getDefaultEmulator } from "@/lib/emulator";
import { announceSignInLink } from "@/lib/session/announce";
import { isAppError } from "@/lib/errors";
import { installServerFastPaths } from "@/lib/fast-paths";
import { getJobQueue, stopJobQueue } from "@/lib/jobs";
import { currentInstance } from "@/lib/instance";
import { handBackBackendDevServers, startBackendDevServerLeaseCheck } from "@/lib/cloud/backend-dev-server-leases";
import { log } from "@/lib/log";
import { getCommandHost } from "@/lib/sandbox";
import { registerDrainStep, shutDown } from "@/lib/shutdown";
import { getStore, prepareStore, type Sql } from "@/lib/store";
import { warmUpAppToolchain } from "@/lib/toolchain";
import { resumeDevServers } from "./resume";

/**
 * Local mode: reopens the emulated deployments' listeners and prints the built-in team's
 * credentials, so users can point their own tools (`@convex-dev/platform`, the `convex` CLI) at it.
 */
async function startEmulator(config: Config): Promise<void> {
  const emulator = getDefaultEmulator();
  const { team, deployments } = await emulator.start();
  // Printed deliberately, like the demo token: this is the local emulator's own credential.
  console.log(
    [
      "",
      `  Local backend emulator (${deployments} deployment${deployments === 1 ? "" : "s"} listening).`,
      `    CONVEX_PROVISION_HOST=${config.PUBLIC_BASE_URL}${EMULATOR_MOUNT_PATH}`,
      `    Team token: ${emulator.identity.teamToken}`,
      `    Team id: ${team.id}  (slug ${team.slug})`,
      "",
    ].join("\n"),
  );
}

/** The store, or exit with the reason when another process holds the embedded database (a second server on one DATA_DIR). */
async function openStoreOrExit(): Promise<Sql> {
  try {
    await prepareStore();
    return await getStore();
  } catch (error) {
    if (!isAppError(error) || error.code !== "database_locked") throw error;
    console.error(`\n  Not starting: ${error.message}\n`);
    process.exit(1);
  }
}

/**
 * Server start: start the local sandbox driver's command host, open (a new embedded database
 * initialised in a child process first) and migrate the store
 * (refused while another process holds its embedded database), register this boot of the
 * instance (so runs its previous boot left are taken over at once), seed the demo on first
 * start, start taking background jobs, start the local emulator and the app toolchain install, shut down gracefully at
 * SIGTERM/SIGINT (lib/shutdown: drain requests, hand the dev-server leases back, stop taking jobs, close), and hand
 * the custom server its fast paths (blob reads, uploads). Then, in the background, resume the dev
 * servers of every project that served a preview, and from then on take over the backend dev
 * servers of instances that died (lib/cloud/backend-dev-server-leases.ts).
 */
export async function startServer(): Promise<void> {
  const config = getConfig();
  // First, while the process is small: the local driver's command host is forked now, so
  // sandbox commands never fork this process once the store has grown it. Only the host: the
  // provider is left to the first route that needs it, as before, since the error classes it
  // throws are those of the bundle that created it.
  if (config.SANDBOX_DRIVER === "local-unwalled") getCommandHost();
  installServerFastPaths();
  const db = await openStoreOrExit();
  const instance = await currentInstance(db);
  log.info("store ready", { store: db.kind, instanceId: instance.instanceId });
  if (config.SEED_DEMO) {
    const seed = await seedDemoIfEmpty(db);
    if (seed) {
      // Printed once, deliberately unredacted: the token is stored hashed and cannot be shown again.
      console.log(
        [
          "",
          "  Demo user created. API token (shown only now, keep it):",
          `    ${seed.token}`,
          `  Demo project: ${seed.project.id}`,
          `  Try: curl -H "Authorization: Bearer ${seed.token}" ${config.PUBLIC_BASE_URL}/api/projects`,
          "",
        ].join("\n"),
      );
    }
    await announceSignInLink(db, config);
  }
  // This instance takes queued jobs from now on, also those another instance left behind.
  await getJobQueue();
  if (config.BACKEND_PROVIDER === "local") await startEmulator(config);
  // Local sandboxes hard-link the app toolchain: install it now, not on the first project.
  if (config.SANDBOX_DRIVER !== "e2b") warmUpAppToolchain();
  // Jobs first: a job still running may hold a sandbox whose dev server is handed back next.
  registerDrainStep("stop taking jobs and let running ones finish", stopJobQueue);
  registerDrainStep("hand back the backend dev server leases", () => handBackBackendDevServers(db));
  // Drains requests, runs the drain steps, then stops the heartbeat and closes the emulator's
  // listeners, the browser and, last, the store.
  let shuttingDown = false;
  const shutdown = (signal: NodeJS.Signals) => {
    // Once: Ctrl-C signals both scripts/start.mjs and this process, and start.mjs forwards it.
    if (shuttingDown) return;
    shuttingDown = true;
    log.info("shutting down", { signal });
    void shutDown({ drainMs: config.SHUTDOWN_DRAIN_MS })
      .catch((error: unknown) => log.error("shutdown failed", { error }))
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  // Not awaited: health answers at once while the previews come back. The lease check starts
  // after them, so a server this instance's previous boot owned is not both resumed and taken over.
  void resumeDevServers(db)
    .catch((error: unknown) => log.error("resuming dev servers failed", { error }))
    .finally(() => startBackendDevServerLeaseCheck(db));
}
